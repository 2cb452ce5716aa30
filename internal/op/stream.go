package op

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime/debug"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/exchange"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
)

// Stream is a typed stream of records in a Job.
type Stream[T any] struct {
	job  *dataflow.Graph
	node *dataflow.Node
	port int
	// timed reports whether records carry event times.
	timed bool
}

// plainInput is an edge from s that needs no key: forward, gather or
// rebalance, decided by the plan.
func plainInput[T any](s Stream[T], batchSize int) dataflow.InputEdge {
	return dataflow.InputEdge{
		From: s.node, FromPort: s.port,
		Exchange: func(x dataflow.ExchangeCtx) any {
			if x.Ordered {
				return &guard[T]{name: x.Name, p: exchange.NewOrdSendEx[T](x, batchSize, s.timed)}
			}
			return &guard[T]{name: x.Name, p: exchange.NewSendEx[T](x.Outlets, batchSize, s.timed)}
		},
		Wire: func() (dataflow.Wire, error) { return exchange.NewBatchWire[T](batchSize, s.timed) },
	}
}

// singlePort is the ports table of a node with one output of type T.
func singlePort[T any]() []func([]any) any {
	return []func([]any) any{func(outs []any) any { return dataflow.Combine[T](outs) }}
}

// SourceOf adds a source to the graph.
func SourceOf[T any](j *dataflow.Graph, name string, src dataflow.Input[T], opts ...dataflow.Option) Stream[T] {
	c := dataflow.OpOptions(opts)
	if c.Name != "" {
		name = c.Name
	}
	n := j.Add(&dataflow.Node{Name: name, Op: "source", Kind: plan.Source, Par: c.Parallelism, ParSet: c.ParSet, Ports: singlePort[T]()})
	n.Params, n.Source = "of "+dataflow.TypeList(reflect.TypeFor[T]()), dataflow.Identify(src)
	if c, ok := src.(dataflow.Counted); ok {
		j.Counted = append(j.Counted, c)
	}
	n.NewSource = func(tc dataflow.TaskCtx, outs []any) (runtime.SourceTask, error) {
		r, err := src.Open(dataflow.SourceContext{Instance: tc.Inst, Parallelism: tc.Par})
		if err != nil {
			return nil, err
		}
		return &sourceTask[T]{r: r, out: outs[0].(dataflow.Pusher[T]), units: tc.Units}, nil
	}
	if rec, ok := src.(dataflow.Recoverable); ok {
		n.RecoverInput = rec.Recover
	}
	return Stream[T]{job: j, node: n}
}

type sourceTask[T any] struct {
	r    dataflow.Reader[T]
	out  dataflow.Pusher[T]
	b    dataflow.Batch[T]
	rest []T   // records of the last Read not pushed yet
	err  error // error of the last Read, returned once rest is pushed
	// units, in an ordered job, numbers the batches pushed: one unit each.
	units *dataflow.UnitCtx
	unit  int64
	// read is the length of the last Read's batch; after, in a job with
	// checkpoints, runs once the source has passed a marker.
	read int
	// pushed counts the records pushed, saved with the position so that
	// a restored job counts what came before.
	pushed int64
	after  func(progress.Marker) error
}

// Position is where the source stands: after the records it has pushed.
func (s *sourceTask[T]) Position() ([]byte, error) {
	r, ok := s.r.(dataflow.Seekable)
	if !ok {
		return nil, fmt.Errorf("weir: the reader %T cannot be checkpointed: it does not implement weir.Seekable", s.r)
	}
	return r.Position(s.read - len(s.rest))
}

// SeekSplits resumes the source at the unread records of a run with
// another parallelism.
func (s *sourceTask[T]) SeekSplits(pos [][]byte) error {
	r, ok := s.r.(dataflow.Rescalable)
	if !ok {
		return fmt.Errorf("weir: the reader %T cannot resume a run with another parallelism: it does not implement weir.Rescalable", s.r)
	}
	return r.SeekSplits(pos)
}

func (s *sourceTask[T]) SetAfter(f func(progress.Marker) error) { s.after = f }

func (s *sourceTask[T]) Count() int64 { return s.pushed }

// Seek resumes the source at a saved position.
func (s *sourceTask[T]) Seek(pos []byte) error {
	r, ok := s.r.(dataflow.Seekable)
	if !ok {
		return fmt.Errorf("weir: the reader %T cannot be checkpointed: it does not implement weir.Seekable", s.r)
	}
	return r.Seek(pos)
}

func (s *sourceTask[T]) Poll(limit int) (int, error) {
	if len(s.rest) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.rest, s.err = s.r.Read()
		s.read = len(s.rest)
		if errors.Is(s.err, io.EOF) {
			s.err = runtime.ErrEndOfInput
		}
		if len(s.rest) == 0 {
			err := s.err
			s.err = nil
			if err == nil {
				return 0, nil
			}
			s.err = err // keep returning it
			return 0, err
		}
	}
	n := len(s.rest)
	if limit > 0 && n > limit {
		n = limit
	}
	s.b.V, s.b.Sel = s.rest[:n:n], nil
	s.rest = s.rest[n:]
	s.pushed += int64(n)
	if err := s.out.Push(&s.b); err != nil {
		return n, err
	}
	if s.units != nil {
		s.units.Unit = s.unit
		s.unit++
		return n, s.units.End()
	}
	return n, nil
}

func (s *sourceTask[T]) Mark(m progress.Marker) error {
	if err := s.out.Mark(m); err != nil {
		return err
	}
	if s.after != nil {
		return s.after(m)
	}
	return nil
}

func (s *sourceTask[T]) Close() error { return s.r.Close() }

// guard names the operator in a panic raised by its function, so that the
// error says which fused operator failed rather than only the head of its
// chain. Every fused operator, sink and exchange sender is guarded, so a
// panic is named by the innermost guard around it: the operator whose code
// raised it. A guard costs one deferred call per batch.
type guard[T any] struct {
	name string
	p    dataflow.Pusher[T]
}

func (g *guard[T]) Push(b *dataflow.Batch[T]) (err error) {
	defer g.recover(&err)
	return g.p.Push(b)
}

func (g *guard[T]) Mark(m progress.Marker) (err error) {
	defer g.recover(&err)
	return g.p.Mark(m)
}

func (g *guard[T]) recover(err *error) {
	if p := recover(); p != nil {
		if pe, ok := p.(opPanic); ok {
			panic(pe) // raised further down the chain; already named
		}
		panic(opPanic{op: g.name, v: p, stack: debug.Stack()})
	}
}

// opPanic is a panic in an operator's function, with the operator's name.
// The runtime recovers it and fails the job with it.
type opPanic struct {
	op    string
	v     any
	stack []byte
}

func (p opPanic) String() string { return fmt.Sprintf("%s: %v", p.op, p.v) }

// Stack is where the panic was raised.
func (p opPanic) Stack() []byte { return p.stack }

// gatherSeq returns the sequence numbers of b's selected records, appended
// to buf, or nil if b has none.
func gatherSeq[T any](buf []uint64, b *dataflow.Batch[T]) []uint64 {
	if b.Seq == nil {
		return nil
	}
	for _, i := range b.Sel {
		buf = append(buf, b.Seq[i])
	}
	return buf
}

// passTask feeds batches from an inbox into a chain.
type passTask[T any] struct{ out dataflow.Pusher[T] }

func (p *passTask[T]) Batch(port int, b any) error {
	bt := b.(*dataflow.Batch[T])
	err := p.out.Push(bt)
	bt.Release()
	return err
}

func (p *passTask[T]) Mark(m progress.Marker) error { return p.out.Mark(m) }

// Map applies f to every record.
func Map[T, U any](s Stream[T], f func(T) U, opts ...dataflow.Option) Stream[U] {
	return recordOp(s, "map", userOne, opts, func(_ dataflow.TaskCtx, out dataflow.Pusher[U]) dataflow.Pusher[T] {
		return &mapOp[T, U]{f: f, out: out}
	})
}

type mapOp[T, U any] struct {
	f   func(T) U
	out dataflow.Pusher[U]
	b   dataflow.Batch[U]
	ts  []int64
	seq []uint64
}

func (o *mapOp[T, U]) Push(b *dataflow.Batch[T]) error {
	n := b.Len()
	if cap(o.b.V) < n {
		o.b.V = make([]U, n)
	}
	out := o.b.V[:n]
	o.b.V = out
	if b.Sel == nil {
		for i, v := range b.V {
			out[i] = o.f(v)
		}
		o.b.Ts, o.b.Seq = b.Ts, b.Seq
		return o.out.Push(&o.b)
	}
	for j, i := range b.Sel {
		out[j] = o.f(b.V[i])
	}
	o.b.Ts = nil
	if b.Ts != nil {
		if cap(o.ts) < n {
			o.ts = make([]int64, n)
		}
		o.b.Ts = o.ts[:n]
		for j, i := range b.Sel {
			o.b.Ts[j] = b.Ts[i]
		}
	}
	o.b.Seq = gatherSeq(o.seq[:0], b)
	o.seq = o.b.Seq
	return o.out.Push(&o.b)
}

func (o *mapOp[T, U]) Mark(m progress.Marker) error { return o.out.Mark(m) }

// MapRef is Map with a function that reads the record through a pointer,
// which saves copying large records (structs of many fields) on every call.
// f must not keep the pointer or modify the record.
//
// mapRefOp and filterRefOp repeat the loops of mapOp and filterOp on
// purpose: wrapping one kind of function in the other would add a call per
// record on the hot path.
func MapRef[T, U any](s Stream[T], f func(*T) U, opts ...dataflow.Option) Stream[U] {
	return recordOp(s, "map", userOne, opts, func(_ dataflow.TaskCtx, out dataflow.Pusher[U]) dataflow.Pusher[T] {
		return &mapRefOp[T, U]{f: f, out: out}
	})
}

type mapRefOp[T, U any] struct {
	f   func(*T) U
	out dataflow.Pusher[U]
	b   dataflow.Batch[U]
	ts  []int64
	seq []uint64
}

func (o *mapRefOp[T, U]) Push(b *dataflow.Batch[T]) error {
	n := b.Len()
	if cap(o.b.V) < n {
		o.b.V = make([]U, n)
	}
	out := o.b.V[:n]
	o.b.V = out
	if b.Sel == nil {
		for i := range b.V {
			out[i] = o.f(&b.V[i])
		}
		o.b.Ts, o.b.Seq = b.Ts, b.Seq
		return o.out.Push(&o.b)
	}
	for j, i := range b.Sel {
		out[j] = o.f(&b.V[i])
	}
	o.b.Ts = nil
	if b.Ts != nil {
		if cap(o.ts) < n {
			o.ts = make([]int64, n)
		}
		o.b.Ts = o.ts[:n]
		for j, i := range b.Sel {
			o.b.Ts[j] = b.Ts[i]
		}
	}
	o.b.Seq = gatherSeq(o.seq[:0], b)
	o.seq = o.b.Seq
	return o.out.Push(&o.b)
}

func (o *mapRefOp[T, U]) Mark(m progress.Marker) error { return o.out.Mark(m) }

// FilterRef is Filter with a predicate that reads the record through a
// pointer, which saves copying large records on every call. keep must not
// keep the pointer or modify the record.
func FilterRef[T any](s Stream[T], keep func(*T) bool, opts ...dataflow.Option) Stream[T] {
	return recordOp(s, "filter", userAtMostOne, opts, func(_ dataflow.TaskCtx, out dataflow.Pusher[T]) dataflow.Pusher[T] {
		return &filterRefOp[T]{f: keep, out: out}
	})
}

type filterRefOp[T any] struct {
	f   func(*T) bool
	out dataflow.Pusher[T]
	b   dataflow.Batch[T]
	sel []int32
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
	o.sel = sel
	if len(sel) == 0 {
		return nil
	}
	o.b = dataflow.Batch[T]{V: b.V, Ts: b.Ts, Sel: sel, Seq: b.Seq}
	if len(sel) == len(b.V) {
		o.b.Sel = nil
	}
	return o.out.Push(&o.b)
}

func (o *filterRefOp[T]) Mark(m progress.Marker) error { return o.out.Mark(m) }

// Filter keeps the records for which keep returns true.
func Filter[T any](s Stream[T], keep func(T) bool, opts ...dataflow.Option) Stream[T] {
	return recordOp(s, "filter", userAtMostOne, opts, func(_ dataflow.TaskCtx, out dataflow.Pusher[T]) dataflow.Pusher[T] {
		return &filterOp[T]{f: keep, out: out}
	})
}

type filterOp[T any] struct {
	f   func(T) bool
	out dataflow.Pusher[T]
	b   dataflow.Batch[T]
	sel []int32
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
	o.sel = sel
	if len(sel) == 0 {
		return nil
	}
	o.b = dataflow.Batch[T]{V: b.V, Ts: b.Ts, Sel: sel, Seq: b.Seq}
	if len(sel) == len(b.V) {
		o.b.Sel = nil
	}
	return o.out.Push(&o.b)
}

func (o *filterOp[T]) Mark(m progress.Marker) error { return o.out.Mark(m) }

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

// Union merges streams of the same type. Watermarks are the minimum over the
// inputs.
func Union[T any](s Stream[T], more ...Stream[T]) Stream[T] {
	j := s.job
	n := j.Add(&dataflow.Node{Op: "union", Kind: plan.Inboxed, State: plan.Stateless, Sel: plan.ExactlyOne, Ports: singlePort[T]()})
	timed, untimed := false, false
	for _, m := range append([]Stream[T]{s}, more...) {
		if m.job != j {
			j.Fail(fmt.Errorf("weir: union of streams from different jobs"))
			continue
		}
		n.Inputs = append(n.Inputs, plainInput(m, j.Cfg.BatchSize))
		timed = timed || m.timed
		untimed = untimed || !m.timed
	}
	if timed && untimed {
		j.Fail(fmt.Errorf("weir: union of streams with and without event time"))
	}
	n.NewTask = func(_ dataflow.TaskCtx, outs []any) (runtime.InputTask, error) {
		return &passTask[T]{out: outs[0].(dataflow.Pusher[T])}, nil
	}
	return Stream[T]{job: j, node: n, timed: timed}
}

// Sink sends the stream to sink. By default the sink runs as one instance;
// see Output's documentation for Parallelism.
func Sink[T any](s Stream[T], sink dataflow.Output[T], opts ...dataflow.Option) {
	j := s.job
	c := dataflow.OpOptions(opts)
	n := j.Add(&dataflow.Node{Name: c.Name, Op: "sink", Kind: plan.Sink, Par: c.Parallelism, ParSet: c.ParSet})
	n.Inputs = []dataflow.InputEdge{plainInput(s, j.Cfg.BatchSize)}
	save := func(tc dataflow.TaskCtx) error {
		if tc.Snaps == nil {
			return nil
		}
		_, cp := sink.(dataflow.Checkpointed)
		_, tp := sink.(dataflow.TwoPhase)
		if (cp || tp) && tc.Par > 1 {
			// Instances share the output, and each passes a checkpoint at
			// its own moment: no one of them can save it.
			return fmt.Errorf("weir: %s: an exactly-once output runs as one instance in a job with checkpoints, not %d", n.Name, tc.Par)
		}
		if tc.Inst != 0 {
			return nil
		}
		if tp, ok := sink.(dataflow.TwoPhase); ok {
			cm, err := tc.Commits(tp, n.Name, tc.Inst)
			if err != nil {
				return err
			}
			tc.Saves(n.Name, cm)
		} else if c, ok := sink.(dataflow.Checkpointed); ok {
			tc.Saves(n.Name, sinkState{c})
		}
		return nil
	}
	n.NewOp = func(tc dataflow.TaskCtx, outs []any) (any, error) {
		if err := save(tc); err != nil {
			return nil, err
		}
		return &guard[T]{name: n.Name, p: &sinkOp[T]{sink: sink}}, nil
	}
	n.NewTask = func(tc dataflow.TaskCtx, outs []any) (runtime.InputTask, error) {
		if err := save(tc); err != nil {
			return nil, err
		}
		p := &guard[T]{name: n.Name, p: &sinkOp[T]{sink: sink}}
		if tc.Recv != nil {
			return exchange.NewOrdTask[T](*tc.Recv, tc.Units, p), nil
		}
		return &passTask[T]{out: p}, nil
	}
}

type sinkOp[T any] struct {
	sink dataflow.Output[T]
	d    dataflow.Batch[T]
}

func (o *sinkOp[T]) Push(b *dataflow.Batch[T]) error {
	v, _ := b.Dense(&o.d)
	err := o.sink.Write(v)
	if b.Sel != nil {
		clear(o.d.V)
	}
	return err
}

func (o *sinkOp[T]) Mark(m progress.Marker) error {
	if es, ok := o.sink.(dataflow.EpochSink); ok {
		if err := es.EndEpoch(uint64(m.Epoch)); err != nil {
			return err
		}
	}
	if m.Final {
		return o.sink.Close()
	}
	return nil
}
