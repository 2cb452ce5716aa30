package op

import (
	"fmt"
	"math"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
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
// the watermark back until it sees one or its input ends; there is no
// idleness timeout, so a source split that stays empty (more instances than
// partitions, say) holds back every window until the input ends. Give
// EventTime the parallelism of its source: an instance fed by several
// source splits sees their maximum, and its watermark can run ahead of the
// slower splits.
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
	held := dataflow.NewTimeRange() // narrowed by the windows declared downstream
	out := recordOp(s, "eventtime", builtinOne, opts, func(tc dataflow.TaskCtx, out dataflow.Pusher[T]) dataflow.Pusher[T] {
		return newEventTimeOp(tc.Op, ts, delay, *held, out)
	})
	out.node.Times = []*dataflow.TimeRange{held}
	out.timed = true
	out.node.Params += fmt.Sprintf(", out of order by at most %dms", delay)
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
		if o.max != progress.NoWatermark {
			o.wm = max(o.wm, window.Watermark(o.max, o.delay))
		}
		m.Watermark = o.wm
	}
	return o.out.Mark(m)
}
