package dataflow

import (
	"fmt"
	"time"
)

// TimeDomain says which clock a timer or a state time-to-live follows.
type TimeDomain uint8

const (
	// EventTime follows the watermark: a time is reached once the
	// watermark is at or past it.
	EventTime TimeDomain = iota
	// ProcessingTime follows the wall clock of the process running the
	// instance, read at epoch ends.
	ProcessingTime
)

// String returns "event time" or "processing time".
func (d TimeDomain) String() string {
	switch d {
	case EventTime:
		return "event time"
	case ProcessingTime:
		return "processing time"
	}
	return fmt.Sprintf("TimeDomain(%d)", uint8(d))
}

// TTL is a state time-to-live: state expires After its last write, in
// Domain's time. The zero TTL keeps state forever.
type TTL struct {
	After  time.Duration
	Domain TimeDomain
	set    bool
}

// Set says whether StateTTL was given.
func (t TTL) Set() bool { return t.set }

// Check refuses a TTL that cannot work.
func (t TTL) Check() error {
	if !t.set {
		return nil
	}
	if t.After < time.Millisecond {
		return fmt.Errorf("StateTTL(%v): the time-to-live must be at least 1ms", t.After)
	}
	if t.Domain > ProcessingTime {
		return fmt.Errorf("StateTTL: unknown time domain %v", t.Domain)
	}
	return nil
}

// StateTTL makes an operator's keyed state expire d after it was last
// written, in the given time domain: event time (the state of a key is
// dropped once the watermark passes its last write's event time plus d)
// or processing time (once the wall clock passes its last write plus d).
// Expired state is dropped at epoch ends, and a key whose state expired
// starts again from the zero value.
func StateTTL(d time.Duration, domain TimeDomain) Option {
	return func(c *OpConfig) { c.TTL = TTL{After: d, Domain: domain, set: true} }
}
