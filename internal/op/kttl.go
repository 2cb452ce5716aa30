package op

import (
	"fmt"
	"math"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/window"
)

// State time-to-live (StateTTL) of the operators that keep state per key
// for a function: KeyedProcess, CoProcess and Process. A key's state is
// touched when the function gets it (State, or every record for
// Process); its last touch is the latest event time it was touched at
// (the record's, or the timer's) or the processing time of the batch
// that touched it. The state expires once its domain's time reaches last
// touch + TTL: in event time the watermark (in OnTimer of an event-time
// timer, the timer's time, since timers fire in time order up to the
// watermark), in processing time the job's clock. Epoch ends drop
// expired state, and state found expired when touched starts again from
// the zero value. Expiry drops the state, not the key's timers (as
// Flink's TTL does): a key whose state expired still fires its timers,
// with the zero value as state.

// stateTTL is an operator instance's time-to-live, in milliseconds of its
// domain (after 0: none), with a time before which no state expires.
type stateTTL struct {
	after int64
	dom   dataflow.TimeDomain
	next  int64
}

func newStateTTL(t dataflow.TTL) stateTTL {
	s := stateTTL{dom: t.Domain, next: math.MaxInt64}
	if t.Set() {
		s.after = t.After.Milliseconds()
	}
	return s
}

// clock picks the time of the TTL's domain: the watermark or the
// processing time.
func (t *stateTTL) clock(wm, now int64) int64 {
	if t.dom == dataflow.EventTime {
		return wm
	}
	return now
}

// expired says whether state last touched at last has expired at time at.
func (t *stateTTL) expired(last, at int64) bool { return window.AddSat(last, t.after) <= at }

// noteLife notes that some state lives until last + after.
func (t *stateTTL) noteLife(last int64) { t.next = min(t.next, window.AddSat(last, t.after)) }

// procEntry is one key's entry: the function's state, whether the key has
// state (Has: touched since the key was new, cleared or expired), its
// last touch, and its pending timers. An entry with neither state nor
// timers is deleted.
type procEntry[S any] struct {
	State  S
	Has    bool
	Last   int64
	Timers []Timer
}

// touch returns the entry's state for a touch at time at (of the TTL's
// domain) when the domain's time is now: state that expired is dropped
// first.
func (e *procEntry[S]) touch(t *stateTTL, at, now int64) *S {
	if t.after > 0 {
		switch {
		case !e.Has:
			e.Last = at
		case t.expired(e.Last, now):
			e.clear()
			e.Last = at
		default:
			e.Last = max(e.Last, at)
		}
		t.noteLife(e.Last)
	}
	e.Has = true
	return &e.State
}

func (e *procEntry[S]) clear() {
	var zero S
	e.State, e.Has = zero, false
}

// expireEntries drops the state that has expired at time at from table,
// and the entries left with neither state nor timers, unless nothing can
// have expired yet.
func expireEntries[K comparable, S any](table keyedStore[K, procEntry[S]], t *stateTTL, at int64) {
	if t.after == 0 || at < t.next {
		return
	}
	t.next = math.MaxInt64
	table.DeleteFunc(func(_ K, e *procEntry[S]) bool {
		if e.Has && t.expired(e.Last, at) {
			e.clear()
		}
		if e.Has {
			t.noteLife(e.Last)
		}
		return !e.Has && len(e.Timers) == 0
	})
}

// checkTTL fails a StateTTL that cannot work on an operator that honours
// it, and says what the job's identity records of it.
func checkTTL(j *dataflow.Graph, name string, t dataflow.TTL, timed bool) string {
	if !t.Set() {
		return ""
	}
	if err := t.Check(); err != nil {
		j.Fail(fmt.Errorf("weir: %s: %w", name, err))
	}
	if t.Domain == dataflow.EventTime && !timed {
		j.Fail(fmt.Errorf("weir: %s: StateTTL in event time needs event time on the input; assign it with EventTime", name))
	}
	return fmt.Sprintf(", state TTL %dms in %s", t.After.Milliseconds(), t.Domain)
}

// takes says which of the options that only some operators honour
// (StateTTL, IdleAfter) an operator takes.
type takes uint8

const (
	takesTTL takes = 1 << iota
	takesIdle
)

// refuseOptions fails, naming the operator, the options of c that it
// does not take: StateTTL where no per-key state can expire, IdleAfter
// anywhere but EventTime.
func refuseOptions(j *dataflow.Graph, name string, c dataflow.OpConfig, t takes) {
	if t&takesTTL == 0 && c.TTL.Set() {
		j.Fail(fmt.Errorf("weir: %s: StateTTL does not apply to this operator: only KeyedProcess, CoProcess, Process and the unwindowed joins keep per-key state that can expire", name))
	}
	if t&takesIdle == 0 {
		j.RefuseIdle(c, name)
	}
}
