package op

import (
	"errors"
	"fmt"
	"math"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/exchange"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
)

// Map applies f to every record.
func Map[T, U any](s Stream[T], f func(T) U, opts ...dataflow.Option) Stream[U] {
	return recordOp(s, "map", userOne, opts, func(_ dataflow.TaskCtx, out dataflow.Pusher[U]) dataflow.Pusher[T] {
		return &mapOp[T, U]{mapped: mapped[U]{out: out}, f: f}
	})
}

// mapped is the output side of the one-to-one operators: a dense batch
// of one output per input record, with the input's event times and
// sequence numbers (gathered, if the input has a selection).
type mapped[U any] struct {
	out dataflow.Pusher[U]
	b   dataflow.Batch[U]
	ts  []int64
	seq []uint64
}

// values returns the output slots for n records.
func (o *mapped[U]) values(n int) []U {
	if cap(o.b.V) < n {
		o.b.V = make([]U, n)
	}
	o.b.V = o.b.V[:n]
	return o.b.V
}

// pushMapped pushes the outputs made from in's records, with their times.
func pushMapped[T, U any](o *mapped[U], in *dataflow.Batch[T]) error {
	if in.Sel == nil {
		o.b.Ts, o.b.Seq = in.Ts, in.Seq
		return o.out.Push(&o.b)
	}
	o.b.Ts = nil
	if in.Ts != nil {
		n := len(in.Sel)
		if cap(o.ts) < n {
			o.ts = make([]int64, n)
		}
		o.b.Ts = o.ts[:n]
		for j, i := range in.Sel {
			o.b.Ts[j] = in.Ts[i]
		}
	}
	o.b.Seq = gatherSeq(o.seq[:0], in)
	o.seq = o.b.Seq
	return o.out.Push(&o.b)
}

func (o *mapped[U]) Mark(m progress.Marker) error { return o.out.Mark(m) }

type mapOp[T, U any] struct {
	mapped[U]
	f func(T) U
}

func (o *mapOp[T, U]) Push(b *dataflow.Batch[T]) error {
	out := o.values(b.Len())
	if b.Sel == nil {
		for i, v := range b.V {
			out[i] = o.f(v)
		}
	} else {
		for j, i := range b.Sel {
			out[j] = o.f(b.V[i])
		}
	}
	return pushMapped(&o.mapped, b)
}

// MapRef is Map with a function that reads the record through a pointer,
// which saves copying large records (structs of many fields) on every call.
// f must not keep the pointer or modify the record.
//
// mapRefOp and filterRefOp repeat the loops of mapOp and filterOp (their
// output sides, mapped and selected, are shared) on purpose: wrapping one
// kind of function in the other would add a call per record on the hot
// path.
func MapRef[T, U any](s Stream[T], f func(*T) U, opts ...dataflow.Option) Stream[U] {
	return recordOp(s, "map", userOne, opts, func(_ dataflow.TaskCtx, out dataflow.Pusher[U]) dataflow.Pusher[T] {
		return &mapRefOp[T, U]{mapped: mapped[U]{out: out}, f: f}
	})
}

type mapRefOp[T, U any] struct {
	mapped[U]
	f func(*T) U
}

func (o *mapRefOp[T, U]) Push(b *dataflow.Batch[T]) error {
	out := o.values(b.Len())
	if b.Sel == nil {
		for i := range b.V {
			out[i] = o.f(&b.V[i])
		}
	} else {
		for j, i := range b.Sel {
			out[j] = o.f(&b.V[i])
		}
	}
	return pushMapped(&o.mapped, b)
}

// FilterRef is Filter with a predicate that reads the record through a
// pointer, which saves copying large records on every call. keep must not
// keep the pointer or modify the record.
func FilterRef[T any](s Stream[T], keep func(*T) bool, opts ...dataflow.Option) Stream[T] {
	return recordOp(s, "filter", userAtMostOne, opts, func(_ dataflow.TaskCtx, out dataflow.Pusher[T]) dataflow.Pusher[T] {
		return &filterRefOp[T]{selected: selected[T]{out: out}, f: keep}
	})
}

// selected is the output side of the filters: the input's records at
// the positions the filter kept, without copying them.
type selected[T any] struct {
	out dataflow.Pusher[T]
	b   dataflow.Batch[T]
	sel []int32
}

// push pushes the records of in at positions sel, keeping sel's buffer.
func (o *selected[T]) push(in *dataflow.Batch[T], sel []int32) error {
	o.sel = sel
	if len(sel) == 0 {
		return nil
	}
	o.b = dataflow.Batch[T]{V: in.V, Ts: in.Ts, Sel: sel, Seq: in.Seq}
	if len(sel) == len(in.V) {
		o.b.Sel = nil
	}
	return o.out.Push(&o.b)
}

func (o *selected[T]) Mark(m progress.Marker) error { return o.out.Mark(m) }

type filterRefOp[T any] struct {
	selected[T]
	f func(*T) bool
}

func (o *filterRefOp[T]) Push(b *dataflow.Batch[T]) error {
	sel := o.sel[:0]
	if b.Sel == nil {
		for i := range b.V {
			if o.f(&b.V[i]) {
				sel = append(sel, int32(i))
			}
		}
	} else {
		for _, i := range b.Sel {
			if o.f(&b.V[i]) {
				sel = append(sel, i)
			}
		}
	}
	return o.push(b, sel)
}

// Filter keeps the records for which keep returns true.
func Filter[T any](s Stream[T], keep func(T) bool, opts ...dataflow.Option) Stream[T] {
	return recordOp(s, "filter", userAtMostOne, opts, func(_ dataflow.TaskCtx, out dataflow.Pusher[T]) dataflow.Pusher[T] {
		return &filterOp[T]{selected: selected[T]{out: out}, f: keep}
	})
}

type filterOp[T any] struct {
	selected[T]
	f func(T) bool
}

func (o *filterOp[T]) Push(b *dataflow.Batch[T]) error {
	sel := o.sel[:0]
	if b.Sel == nil {
		for i := range b.V {
			if o.f(b.V[i]) {
				sel = append(sel, int32(i))
			}
		}
	} else {
		for _, i := range b.Sel {
			if o.f(b.V[i]) {
				sel = append(sel, i)
			}
		}
	}
	return o.push(b, sel)
}

var errFlatMapAppend = errors.New("weir: a FlatMap function must append its outputs to out and return it")

// FlatMap calls f for every record; f appends any number of outputs to out
// and returns it (the append style lets f avoid allocation). Selectivity
// may declare that f makes at most or exactly one output per record.
func FlatMap[T, U any](s Stream[T], f func(v T, out []U) []U, opts ...dataflow.Option) Stream[U] {
	return recordOp(s, "flatmap", userAny, opts, func(tc dataflow.TaskCtx, out dataflow.Pusher[U]) dataflow.Pusher[T] {
		return &flatMapOp[T, U]{f: f, out: out, name: tc.Op, sel: tc.Sel}
	})
}

// flatMapOp calls f for every record. It copies each record's event time to
// its outputs, cuts its sequence number among them in an ordered keyed
// region, and checks the declared selectivity.
type flatMapOp[T, U any] struct {
	f    func(T, []U) []U
	out  dataflow.Pusher[U]
	b    dataflow.Batch[U]
	name string
	sel  plan.Selectivity
	// ts, if set, is given each record's event time (math.MinInt64
	// without) before f is called with it.
	ts *int64
}

func (o *flatMapOp[T, U]) Push(b *dataflow.Batch[T]) error {
	v := o.b.V[:0]
	ts := o.b.Ts[:0]
	seq := o.b.Seq[:0]
	n := b.Len()
	var err error
	for j := 0; j < n; j++ {
		i := j
		if b.Sel != nil {
			i = int(b.Sel[j])
		}
		before := len(v)
		if o.ts != nil {
			*o.ts = math.MinInt64
			if b.Ts != nil {
				*o.ts = b.Ts[i]
			}
		}
		v = o.f(b.V[i], v)
		made := len(v) - before
		if made < 0 {
			return errFlatMapAppend
		}
		if (o.sel == plan.ExactlyOne && made != 1) || (o.sel == plan.AtMostOne && made > 1) {
			return fmt.Errorf("weir: %s declared %v outputs per input but made %d", o.name, o.sel, made)
		}
		if b.Ts != nil {
			for range made {
				ts = append(ts, b.Ts[i])
			}
		}
		if b.Seq != nil && made > 0 {
			if seq, err = exchange.Subdivide(b.Seq[i], made, seq); err != nil {
				return err
			}
		}
	}
	o.b.V, o.b.Ts, o.b.Seq = v, nil, nil
	if b.Ts != nil {
		o.b.Ts = ts
	}
	if b.Seq != nil {
		o.b.Seq = seq
	}
	if len(v) == 0 {
		o.b.Ts, o.b.Seq = ts, seq
		return nil
	}
	err = o.out.Push(&o.b)
	clear(o.b.V)
	o.b.Ts, o.b.Seq = ts, seq
	return err
}

func (o *flatMapOp[T, U]) Mark(m progress.Marker) error { return o.out.Mark(m) }
