package weir

import (
	"fmt"
	"math"
	"time"

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
func EventTime[T any](s Stream[T], ts func(T) int64, maxOutOfOrder time.Duration, opts ...Option) Stream[T] {
	delay := maxOutOfOrder.Milliseconds()
	if maxOutOfOrder < 0 {
		s.job.fail(fmt.Errorf("weir: EventTime: negative out-of-orderness %s", maxOutOfOrder))
	}
	held := newTimeRange() // narrowed by the windows declared downstream
	out := recordOp(s, "eventtime", builtinOne, opts, func(tc taskCtx, out pusher[T]) pusher[T] {
		return newEventTimeOp(tc.op, ts, delay, *held, out)
	})
	out.node.times = []*timeRange{held}
	out.timed = true
	out.node.params += fmt.Sprintf(", out of order by at most %dms", delay)
	return out
}

type eventTimeOp[T any] struct {
	name  string
	f     func(T) int64
	delay int64
	held  timeRange
	out   pusher[T]
	b     batch[T]
	max   int64
	wm    int64
}

func newEventTimeOp[T any](name string, f func(T) int64, delay int64, held timeRange, out pusher[T]) *eventTimeOp[T] {
	return &eventTimeOp[T]{name: name, f: f, delay: delay, held: held, out: out, max: progress.NoWatermark, wm: progress.NoWatermark}
}

func (o *eventTimeOp[T]) push(b *batch[T]) error {
	if cap(o.b.ts) < len(b.v) {
		o.b.ts = make([]int64, len(b.v))
	}
	ts := o.b.ts[:len(b.v)]
	mx, mn := o.max, int64(math.MaxInt64)
	if b.sel == nil {
		for i := range b.v {
			t := o.f(b.v[i])
			ts[i] = t
			mx, mn = max(mx, t), min(mn, t)
		}
	} else {
		for _, i := range b.sel {
			t := o.f(b.v[i])
			ts[i] = t
			mx, mn = max(mx, t), min(mn, t)
		}
	}
	if mn < o.held.lo || mx > o.held.hi {
		return o.outOfRange(b, ts)
	}
	o.max = mx
	o.b.v, o.b.ts, o.b.sel, o.b.seq = b.v, ts, b.sel, b.seq
	return o.out.push(&o.b)
}

// outOfRange is the error of the first record of b whose time is outside
// the range.
func (o *eventTimeOp[T]) outOfRange(b *batch[T], ts []int64) error {
	for j := range b.len() {
		i := j
		if b.sel != nil {
			i = int(b.sel[j])
		}
		if t := ts[i]; !o.held.holds(t) {
			return fmt.Errorf("weir: EventTime %q: event time %d of record %s is outside the range windows can hold [%d, %d]",
				o.name, t, showRecord(b.v[i]), o.held.lo, o.held.hi)
		}
	}
	return nil
}

func (o *eventTimeOp[T]) mark(m progress.Marker) error {
	if !m.Final {
		if o.max != progress.NoWatermark {
			o.wm = max(o.wm, window.Watermark(o.max, o.delay))
		}
		m.Watermark = o.wm
	}
	return o.out.mark(m)
}
