package op

import (
	"fmt"
	"math"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/window"
)

// EventTime assigns event times to the records of s and generates
// watermarks with a bounded out-of-orderness: at each epoch end, the
// watermark is the largest event time seen minus maxOutOfOrder (minus one
// millisecond, so that a record exactly maxOutOfOrder late is still on
// time). ts returns a record's event time in milliseconds.
//
// Each instance tracks its own maximum; downstream operators take the
// minimum over their inputs. An instance that has seen no record yet holds
// the watermark back until it sees one or its input ends, and so does one
// whose input has gone quiet: a source split that stays empty (more
// instances than partitions, say) holds back every window until the input
// ends. IdleAfter(d) lifts that: an instance that has had no record for d
// of processing time is idle, and receivers leave it out of their minimum
// until it sees a record again (see IdleAfter). Give EventTime the
// parallelism of its source: an instance fed by several source splits
// sees their maximum, and its watermark can run ahead of the slower
// splits.
//
// An event time must be one that every window downstream can hold (see
// WindowSpec.TimeRange; math.MinInt64 and math.MaxInt64 never are): a
// record with another fails the job, with an error that names the record,
// before its time reaches a watermark. Input that may hold such times is
// best checked where it is decoded, where a bad record can go to a
// dead-letter output.
func EventTime[T any](s Stream[T], ts func(T) int64, maxOutOfOrder time.Duration, opts ...dataflow.Option) Stream[T] {
	delay := maxOutOfOrder.Milliseconds()
	if maxOutOfOrder < 0 {
		s.job.Fail(fmt.Errorf("weir: EventTime: negative out-of-orderness %s", maxOutOfOrder))
	}
	idle := dataflow.OpOptions(opts).Idle
	if err := idle.Check(); err != nil {
		s.job.Fail(fmt.Errorf("weir: EventTime: %w", err))
	}
	held := dataflow.NewTimeRange() // narrowed by the windows declared downstream
	out := recordOp(s, "eventtime", opDecl{state: plan.Stateless, sel: plan.ExactlyOne, takes: takesIdle}, opts, func(tc dataflow.TaskCtx, out dataflow.Pusher[T]) dataflow.Pusher[T] {
		o := newEventTimeOp(tc.Op, ts, delay, *held, out)
		o.idle = newIdleClock(idle)
		return o
	})
	out.node.Times = []*dataflow.TimeRange{held}
	out.timed = true
	out.node.Params += fmt.Sprintf(", out of order by at most %dms", delay)
	if idle.Set() {
		out.node.Idle = true
		out.node.Params += fmt.Sprintf(", idle after %v", idle.After)
	}
	return out
}

type eventTimeOp[T any] struct {
	name  string
	f     func(T) int64
	delay int64
	held  dataflow.TimeRange
	out   dataflow.Pusher[T]
	b     dataflow.Batch[T]
	max   int64
	wm    int64
	idle  idleClock
	recs  bool // a record since the last marker
}

func newEventTimeOp[T any](name string, f func(T) int64, delay int64, held dataflow.TimeRange, out dataflow.Pusher[T]) *eventTimeOp[T] {
	return &eventTimeOp[T]{name: name, f: f, delay: delay, held: held, out: out, max: progress.NoWatermark, wm: progress.NoWatermark}
}

func (o *eventTimeOp[T]) Push(b *dataflow.Batch[T]) error {
	if cap(o.b.Ts) < len(b.V) {
		o.b.Ts = make([]int64, len(b.V))
	}
	ts := o.b.Ts[:len(b.V)]
	mx, mn := o.max, int64(math.MaxInt64)
	if b.Sel == nil {
		for i := range b.V {
			t := o.f(b.V[i])
			ts[i] = t
			mx, mn = max(mx, t), min(mn, t)
		}
	} else {
		for _, i := range b.Sel {
			t := o.f(b.V[i])
			ts[i] = t
			mx, mn = max(mx, t), min(mn, t)
		}
	}
	if mn < o.held.Lo || mx > o.held.Hi {
		return o.outOfRange(b, ts)
	}
	o.max = mx
	o.recs = o.recs || b.Len() > 0
	o.idle.seen = o.idle.seen || b.Len() > 0
	o.b.V, o.b.Ts, o.b.Sel, o.b.Seq = b.V, ts, b.Sel, b.Seq
	return o.out.Push(&o.b)
}

// outOfRange is the error of the first record of b whose time is outside
// the range.
func (o *eventTimeOp[T]) outOfRange(b *dataflow.Batch[T], ts []int64) error {
	for j := range b.Len() {
		i := j
		if b.Sel != nil {
			i = int(b.Sel[j])
		}
		if t := ts[i]; !o.held.Holds(t) {
			return fmt.Errorf("weir: EventTime %q: event time %d of record %s is outside the range windows can hold [%d, %d]",
				o.name, t, dataflow.ShowRecord(b.V[i]), o.held.Lo, o.held.Hi)
		}
	}
	return nil
}

func (o *eventTimeOp[T]) Mark(m progress.Marker) error {
	if !m.Final {
		o.wm = o.PendingWatermark()
		m.Watermark = o.wm
		// Idle by its own clock, or fed by an idle input (a source
		// instance that reads nothing) and given no record since.
		m.Idle = o.idle.mark() || (m.Idle && !o.recs)
		o.recs = false
	}
	return o.out.Mark(m)
}

// PendingWatermark is the watermark the instance's next marker carries,
// as its records stand.
func (o *eventTimeOp[T]) PendingWatermark() int64 {
	if o.max == progress.NoWatermark {
		return o.wm
	}
	return max(o.wm, window.Watermark(o.max, o.delay))
}

// ResumeWatermark starts the instance's watermark again at wm, forgetting
// the records seen: an instance that takes over a source's shares reads
// records that may be behind its own, and resumes at the lowest watermark
// of the instances that read them until then (lower than its own, maybe,
// which receivers take: the watermark they align never goes back).
func (o *eventTimeOp[T]) ResumeWatermark(wm int64) {
	o.max, o.wm = progress.NoWatermark, wm
}

// SourceWatermark is an operator fused into a source's task whose
// watermark follows the source's shares when they move (EventTime).
type SourceWatermark interface {
	PendingWatermark() int64
	ResumeWatermark(wm int64)
}

// idleClock tells whether an EventTime instance is idle: whether After of
// processing time has passed since the last epoch end that followed a
// record (or since the instance started). It reads the clock once per
// epoch end, never per record, so an instance goes idle between After and
// After plus an epoch after its last record. The zero idleClock is never
// idle.
type idleClock struct {
	after time.Duration
	now   func() time.Time
	seen  bool      // a record since the last epoch end
	last  time.Time // the last epoch end after a record
}

func newIdleClock(i dataflow.Idleness) idleClock {
	if !i.Set() {
		return idleClock{}
	}
	return idleClock{after: i.After, now: i.Now, last: i.Now()}
}

// mark ends an epoch and reports whether the instance is idle.
func (c *idleClock) mark() bool {
	if c.now == nil {
		return false
	}
	now := c.now()
	if c.seen {
		c.seen, c.last = false, now
		return false
	}
	return now.Sub(c.last) >= c.after
}
