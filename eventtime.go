package weir

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/internal/progress"
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
func EventTime[T any](s Stream[T], ts func(T) int64, maxOutOfOrder time.Duration, opts ...Option) Stream[T] {
	delay := maxOutOfOrder.Milliseconds()
	if maxOutOfOrder < 0 {
		s.job.fail(fmt.Errorf("weir: EventTime: negative out-of-orderness %s", maxOutOfOrder))
	}
	out := recordOp(s, "eventtime", builtinOne, opts, func(_ taskCtx, out pusher[T]) pusher[T] {
		return &eventTimeOp[T]{f: ts, delay: delay, out: out, max: progress.NoWatermark, wm: progress.NoWatermark}
	})
	out.timed = true
	out.node.params += fmt.Sprintf(", out of order by at most %dms", delay)
	return out
}

type eventTimeOp[T any] struct {
	f     func(T) int64
	delay int64
	out   pusher[T]
	b     batch[T]
	max   int64
	wm    int64
}

func (o *eventTimeOp[T]) push(b *batch[T]) error {
	if cap(o.b.ts) < len(b.v) {
		o.b.ts = make([]int64, len(b.v))
	}
	ts := o.b.ts[:len(b.v)]
	mx := o.max
	if b.sel == nil {
		for i := range b.v {
			t := o.f(b.v[i])
			ts[i] = t
			mx = max(mx, t)
		}
	} else {
		for _, i := range b.sel {
			t := o.f(b.v[i])
			ts[i] = t
			mx = max(mx, t)
		}
	}
	o.max = mx
	o.b.v, o.b.ts, o.b.sel, o.b.seq = b.v, ts, b.sel, b.seq
	return o.out.push(&o.b)
}

func (o *eventTimeOp[T]) mark(m progress.Marker) error {
	if !m.Final {
		if o.max != progress.NoWatermark {
			o.wm = max(o.wm, o.max-o.delay-1)
		}
		m.Watermark = o.wm
	}
	return o.out.mark(m)
}
