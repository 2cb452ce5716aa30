package dataflow

import (
	"fmt"
	"time"
)

// Idleness is when an EventTime instance counts as idle: once After of
// processing time has passed without a record, read with Now at epoch
// ends. The zero Idleness never makes an instance idle.
type Idleness struct {
	After time.Duration
	// Now is the clock (time.Now unless a test gives another).
	Now func() time.Time
	set bool
}

// Set says whether IdleAfter was given.
func (i Idleness) Set() bool { return i.set }

// Check refuses an Idleness that cannot work.
func (i Idleness) Check() error {
	if i.set && i.After <= 0 {
		return fmt.Errorf("IdleAfter(%v): must be positive", i.After)
	}
	return nil
}

// IdleAfter marks an EventTime instance idle once it has had no record for
// d of processing time: receivers then leave its watermark out of their
// minimum, until it sees a record again.
func IdleAfter(d time.Duration) Option {
	return func(c *OpConfig) { c.Idle = Idleness{After: d, Now: time.Now, set: true} }
}

// IdleAfterClock is IdleAfter with the clock now, for tests.
func IdleAfterClock(d time.Duration, now func() time.Time) Option {
	return func(c *OpConfig) { c.Idle = Idleness{After: d, Now: now, set: true} }
}

// RefuseIdle fails the job if IdleAfter was given to op, an operator other
// than EventTime.
func (j *Graph) RefuseIdle(c OpConfig, op string) {
	if c.Idle.set {
		j.Fail(fmt.Errorf("weir: %s: IdleAfter(%v) is an option of EventTime only", op, c.Idle.After))
	}
}

// IdleUpstream reports whether the watermark of n's output may leave idle
// instances out: whether, on some path up from n, an EventTime was given
// IdleAfter (an EventTime passes on the idleness of its input while it
// sees no record). A sender's own watermark may then be behind the
// receiver's, so the senders of a window fed by n must not decide
// lateness for it (no pre-aggregation). Source instances that read
// nothing while their shares are elsewhere are idle too, but an instance
// that takes shares over starts at the watermark of their readers (see
// internal/engine's moving source splits), so they do not count.
func IdleUpstream(n *Node) bool {
	seen := map[*Node]bool{}
	var up func(n *Node) bool
	up = func(n *Node) bool {
		if seen[n] {
			return false
		}
		seen[n] = true
		if n.Op == eventTimeOp && n.Idle {
			return true
		}
		for _, in := range n.Inputs {
			if up(in.From) {
				return true
			}
		}
		return false
	}
	return up(n)
}

// eventTimeOp is the Op of EventTime's nodes.
const eventTimeOp = "eventtime"
