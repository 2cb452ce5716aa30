package weir

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime/debug"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
)

// Stream is a typed stream of records in a Job.
type Stream[T any] struct {
	job  *graph
	node *node
	port int
	// timed reports whether records carry event times.
	timed bool
}

// plainInput is an edge from s that needs no key: forward, gather or
// rebalance, decided by the plan.
func plainInput[T any](s Stream[T], batchSize int) inputEdge {
	return inputEdge{
		from: s.node, fromPort: s.port,
		exchange: func(x exchangeCtx) any {
			if x.ordered {
				return &guard[T]{name: x.name, p: newOrdSendEx[T](x, batchSize, s.timed)}
			}
			return &guard[T]{name: x.name, p: newSendEx[T](x.outlets, batchSize, s.timed)}
		},
		wire: func() (wire, error) { return newBatchWire[T](batchSize, s.timed) },
	}
}

// singlePort is the ports table of a node with one output of type T.
func singlePort[T any]() []func([]any) any {
	return []func([]any) any{func(outs []any) any { return combine[T](outs) }}
}

// sourceOf adds a source to the graph.
func sourceOf[T any](j *graph, name string, src Input[T], opts ...Option) Stream[T] {
	c := opOptions(opts)
	if c.name != "" {
		name = c.name
	}
	n := j.add(&node{name: name, op: "source", kind: plan.Source, par: c.parallelism, parSet: c.parSet, ports: singlePort[T]()})
	n.params, n.source = "of "+typeList(reflect.TypeFor[T]()), identify(src)
	if c, ok := src.(Counted); ok {
		j.counted = append(j.counted, c)
	}
	n.newSource = func(tc taskCtx, outs []any) (runtime.SourceTask, error) {
		r, err := src.Open(SourceContext{Instance: tc.inst, Parallelism: tc.par})
		if err != nil {
			return nil, err
		}
		return &sourceTask[T]{r: r, out: outs[0].(pusher[T]), units: tc.units}, nil
	}
	if rec, ok := src.(Recoverable); ok {
		n.recoverInput = rec.Recover
	}
	return Stream[T]{job: j, node: n}
}

type sourceTask[T any] struct {
	r    Reader[T]
	out  pusher[T]
	b    batch[T]
	rest []T   // records of the last Read not pushed yet
	err  error // error of the last Read, returned once rest is pushed
	// units, in an ordered job, numbers the batches pushed: one unit each.
	units *unitCtx
	unit  int64
	// read is the length of the last Read's batch; after, in a job with
	// checkpoints, runs once the source has passed a marker.
	read int
	// pushed counts the records pushed, saved with the position so that
	// a restored job counts what came before.
	pushed int64
	after  func(progress.Marker) error
}

// position is where the source stands: after the records it has pushed.
func (s *sourceTask[T]) position() ([]byte, error) {
	r, ok := s.r.(Seekable)
	if !ok {
		return nil, fmt.Errorf("weir: the reader %T cannot be checkpointed: it does not implement weir.Seekable", s.r)
	}
	return r.Position(s.read - len(s.rest))
}

// seekSplits resumes the source at the unread records of a run with
// another parallelism.
func (s *sourceTask[T]) seekSplits(pos [][]byte) error {
	r, ok := s.r.(Rescalable)
	if !ok {
		return fmt.Errorf("weir: the reader %T cannot resume a run with another parallelism: it does not implement weir.Rescalable", s.r)
	}
	return r.SeekSplits(pos)
}

func (s *sourceTask[T]) setAfter(f func(progress.Marker) error) { s.after = f }

func (s *sourceTask[T]) count() int64 { return s.pushed }

// seek resumes the source at a saved position.
func (s *sourceTask[T]) seek(pos []byte) error {
	r, ok := s.r.(Seekable)
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
	s.b.v, s.b.sel = s.rest[:n:n], nil
	s.rest = s.rest[n:]
	s.pushed += int64(n)
	if err := s.out.push(&s.b); err != nil {
		return n, err
	}
	if s.units != nil {
		s.units.unit = s.unit
		s.unit++
		return n, s.units.end()
	}
	return n, nil
}

func (s *sourceTask[T]) Mark(m progress.Marker) error {
	if err := s.out.mark(m); err != nil {
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
	p    pusher[T]
}

func (g *guard[T]) push(b *batch[T]) (err error) {
	defer g.recover(&err)
	return g.p.push(b)
}

func (g *guard[T]) mark(m progress.Marker) (err error) {
	defer g.recover(&err)
	return g.p.mark(m)
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
func gatherSeq[T any](buf []uint64, b *batch[T]) []uint64 {
	if b.seq == nil {
		return nil
	}
	for _, i := range b.sel {
		buf = append(buf, b.seq[i])
	}
	return buf
}

// passTask feeds batches from an inbox into a chain.
type passTask[T any] struct{ out pusher[T] }

func (p *passTask[T]) Batch(port int, b any) error {
	bt := b.(*batch[T])
	err := p.out.push(bt)
	bt.release()
	return err
}

func (p *passTask[T]) Mark(m progress.Marker) error { return p.out.mark(m) }

// Map applies f to every record.
func Map[T, U any](s Stream[T], f func(T) U, opts ...Option) Stream[U] {
	return recordOp(s, "map", userOne, opts, func(_ taskCtx, out pusher[U]) pusher[T] { return &mapOp[T, U]{f: f, out: out} })
}

type mapOp[T, U any] struct {
	f   func(T) U
	out pusher[U]
	b   batch[U]
	ts  []int64
	seq []uint64
}

func (o *mapOp[T, U]) push(b *batch[T]) error {
	n := b.len()
	if cap(o.b.v) < n {
		o.b.v = make([]U, n)
	}
	out := o.b.v[:n]
	o.b.v = out
	if b.sel == nil {
		for i, v := range b.v {
			out[i] = o.f(v)
		}
		o.b.ts, o.b.seq = b.ts, b.seq
		return o.out.push(&o.b)
	}
	for j, i := range b.sel {
		out[j] = o.f(b.v[i])
	}
	o.b.ts = nil
	if b.ts != nil {
		if cap(o.ts) < n {
			o.ts = make([]int64, n)
		}
		o.b.ts = o.ts[:n]
		for j, i := range b.sel {
			o.b.ts[j] = b.ts[i]
		}
	}
	o.b.seq = gatherSeq(o.seq[:0], b)
	o.seq = o.b.seq
	return o.out.push(&o.b)
}

func (o *mapOp[T, U]) mark(m progress.Marker) error { return o.out.mark(m) }

// MapRef is Map with a function that reads the record through a pointer,
// which saves copying large records (structs of many fields) on every call.
// f must not keep the pointer or modify the record.
//
// mapRefOp and filterRefOp repeat the loops of mapOp and filterOp on
// purpose: wrapping one kind of function in the other would add a call per
// record on the hot path.
func MapRef[T, U any](s Stream[T], f func(*T) U, opts ...Option) Stream[U] {
	return recordOp(s, "map", userOne, opts, func(_ taskCtx, out pusher[U]) pusher[T] { return &mapRefOp[T, U]{f: f, out: out} })
}

type mapRefOp[T, U any] struct {
	f   func(*T) U
	out pusher[U]
	b   batch[U]
	ts  []int64
	seq []uint64
}

func (o *mapRefOp[T, U]) push(b *batch[T]) error {
	n := b.len()
	if cap(o.b.v) < n {
		o.b.v = make([]U, n)
	}
	out := o.b.v[:n]
	o.b.v = out
	if b.sel == nil {
		for i := range b.v {
			out[i] = o.f(&b.v[i])
		}
		o.b.ts, o.b.seq = b.ts, b.seq
		return o.out.push(&o.b)
	}
	for j, i := range b.sel {
		out[j] = o.f(&b.v[i])
	}
	o.b.ts = nil
	if b.ts != nil {
		if cap(o.ts) < n {
			o.ts = make([]int64, n)
		}
		o.b.ts = o.ts[:n]
		for j, i := range b.sel {
			o.b.ts[j] = b.ts[i]
		}
	}
	o.b.seq = gatherSeq(o.seq[:0], b)
	o.seq = o.b.seq
	return o.out.push(&o.b)
}

func (o *mapRefOp[T, U]) mark(m progress.Marker) error { return o.out.mark(m) }

// FilterRef is Filter with a predicate that reads the record through a
// pointer, which saves copying large records on every call. keep must not
// keep the pointer or modify the record.
func FilterRef[T any](s Stream[T], keep func(*T) bool, opts ...Option) Stream[T] {
	return recordOp(s, "filter", userAtMostOne, opts, func(_ taskCtx, out pusher[T]) pusher[T] { return &filterRefOp[T]{f: keep, out: out} })
}

type filterRefOp[T any] struct {
	f   func(*T) bool
	out pusher[T]
	b   batch[T]
	sel []int32
}

func (o *filterRefOp[T]) push(b *batch[T]) error {
	sel := o.sel[:0]
	if b.sel == nil {
		for i := range b.v {
			if o.f(&b.v[i]) {
				sel = append(sel, int32(i))
			}
		}
	} else {
		for _, i := range b.sel {
			if o.f(&b.v[i]) {
				sel = append(sel, i)
			}
		}
	}
	o.sel = sel
	if len(sel) == 0 {
		return nil
	}
	o.b = batch[T]{v: b.v, ts: b.ts, sel: sel, seq: b.seq}
	if len(sel) == len(b.v) {
		o.b.sel = nil
	}
	return o.out.push(&o.b)
}

func (o *filterRefOp[T]) mark(m progress.Marker) error { return o.out.mark(m) }

// Filter keeps the records for which keep returns true.
func Filter[T any](s Stream[T], keep func(T) bool, opts ...Option) Stream[T] {
	return recordOp(s, "filter", userAtMostOne, opts, func(_ taskCtx, out pusher[T]) pusher[T] { return &filterOp[T]{f: keep, out: out} })
}

type filterOp[T any] struct {
	f   func(T) bool
	out pusher[T]
	b   batch[T]
	sel []int32
}

func (o *filterOp[T]) push(b *batch[T]) error {
	sel := o.sel[:0]
	if b.sel == nil {
		for i := range b.v {
			if o.f(b.v[i]) {
				sel = append(sel, int32(i))
			}
		}
	} else {
		for _, i := range b.sel {
			if o.f(b.v[i]) {
				sel = append(sel, i)
			}
		}
	}
	o.sel = sel
	if len(sel) == 0 {
		return nil
	}
	o.b = batch[T]{v: b.v, ts: b.ts, sel: sel, seq: b.seq}
	if len(sel) == len(b.v) {
		o.b.sel = nil
	}
	return o.out.push(&o.b)
}

func (o *filterOp[T]) mark(m progress.Marker) error { return o.out.mark(m) }

var errFlatMapAppend = errors.New("weir: a FlatMap function must append its outputs to out and return it")

// FlatMap calls f for every record; f appends any number of outputs to out
// and returns it (the append style lets f avoid allocation). Selectivity
// may declare that f makes at most or exactly one output per record.
func FlatMap[T, U any](s Stream[T], f func(v T, out []U) []U, opts ...Option) Stream[U] {
	return recordOp(s, "flatmap", userAny, opts, func(tc taskCtx, out pusher[U]) pusher[T] {
		return &flatMapOp[T, U]{f: f, out: out, name: tc.op, sel: tc.sel}
	})
}

// flatMapOp calls f for every record. It copies each record's event time to
// its outputs, cuts its sequence number among them in an ordered keyed
// region, and checks the declared selectivity.
type flatMapOp[T, U any] struct {
	f    func(T, []U) []U
	out  pusher[U]
	b    batch[U]
	name string
	sel  plan.Selectivity
}

func (o *flatMapOp[T, U]) push(b *batch[T]) error {
	v := o.b.v[:0]
	ts := o.b.ts[:0]
	seq := o.b.seq[:0]
	n := b.len()
	var err error
	for j := 0; j < n; j++ {
		i := j
		if b.sel != nil {
			i = int(b.sel[j])
		}
		before := len(v)
		v = o.f(b.v[i], v)
		made := len(v) - before
		if made < 0 {
			return errFlatMapAppend
		}
		if (o.sel == plan.ExactlyOne && made != 1) || (o.sel == plan.AtMostOne && made > 1) {
			return fmt.Errorf("weir: %s declared %v outputs per input but made %d", o.name, o.sel, made)
		}
		if b.ts != nil {
			for range made {
				ts = append(ts, b.ts[i])
			}
		}
		if b.seq != nil && made > 0 {
			if seq, err = subdivide(b.seq[i], made, seq); err != nil {
				return err
			}
		}
	}
	o.b.v, o.b.ts, o.b.seq = v, nil, nil
	if b.ts != nil {
		o.b.ts = ts
	}
	if b.seq != nil {
		o.b.seq = seq
	}
	if len(v) == 0 {
		o.b.ts, o.b.seq = ts, seq
		return nil
	}
	err = o.out.push(&o.b)
	clear(o.b.v)
	o.b.ts, o.b.seq = ts, seq
	return err
}

func (o *flatMapOp[T, U]) mark(m progress.Marker) error { return o.out.mark(m) }

// Union merges streams of the same type. Watermarks are the minimum over the
// inputs.
func Union[T any](s Stream[T], more ...Stream[T]) Stream[T] {
	j := s.job
	n := j.add(&node{op: "union", kind: plan.Inboxed, state: plan.Stateless, sel: plan.ExactlyOne, ports: singlePort[T]()})
	timed, untimed := false, false
	for _, m := range append([]Stream[T]{s}, more...) {
		if m.job != j {
			j.fail(fmt.Errorf("weir: union of streams from different jobs"))
			continue
		}
		n.inputs = append(n.inputs, plainInput(m, j.cfg.batchSize))
		timed = timed || m.timed
		untimed = untimed || !m.timed
	}
	if timed && untimed {
		j.fail(fmt.Errorf("weir: union of streams with and without event time"))
	}
	n.newTask = func(_ taskCtx, outs []any) (runtime.InputTask, error) {
		return &passTask[T]{out: outs[0].(pusher[T])}, nil
	}
	return Stream[T]{job: j, node: n, timed: timed}
}

// Sink sends the stream to sink. By default the sink runs as one instance;
// see Output's documentation for Parallelism.
func Sink[T any](s Stream[T], sink Output[T], opts ...Option) {
	j := s.job
	c := opOptions(opts)
	n := j.add(&node{name: c.name, op: "sink", kind: plan.Sink, par: c.parallelism, parSet: c.parSet})
	n.inputs = []inputEdge{plainInput(s, j.cfg.batchSize)}
	save := func(tc taskCtx) error {
		if tc.snaps == nil {
			return nil
		}
		_, cp := sink.(Checkpointed)
		_, tp := sink.(TwoPhase)
		if (cp || tp) && tc.par > 1 {
			// Instances share the output, and each passes a checkpoint at
			// its own moment: no one of them can save it.
			return fmt.Errorf("weir: %s: an exactly-once output runs as one instance in a job with checkpoints, not %d", n.name, tc.par)
		}
		if tc.inst != 0 {
			return nil
		}
		if tp, ok := sink.(TwoPhase); ok {
			cm, err := tc.commits(tp, n.name, tc.inst)
			if err != nil {
				return err
			}
			tc.saves(n.name, cm)
		} else if c, ok := sink.(Checkpointed); ok {
			tc.saves(n.name, sinkState{c})
		}
		return nil
	}
	n.newOp = func(tc taskCtx, outs []any) (any, error) {
		if err := save(tc); err != nil {
			return nil, err
		}
		return &guard[T]{name: n.name, p: &sinkOp[T]{sink: sink}}, nil
	}
	n.newTask = func(tc taskCtx, outs []any) (runtime.InputTask, error) {
		if err := save(tc); err != nil {
			return nil, err
		}
		p := &guard[T]{name: n.name, p: &sinkOp[T]{sink: sink}}
		if tc.recv != nil {
			return newOrdTask[T](*tc.recv, tc.units, p), nil
		}
		return &passTask[T]{out: p}, nil
	}
}

type sinkOp[T any] struct {
	sink Output[T]
	d    batch[T]
}

func (o *sinkOp[T]) push(b *batch[T]) error {
	v, _ := b.dense(&o.d)
	err := o.sink.Write(v)
	if b.sel != nil {
		clear(o.d.v)
	}
	return err
}

func (o *sinkOp[T]) mark(m progress.Marker) error {
	if es, ok := o.sink.(EpochSink); ok {
		if err := es.EndEpoch(uint64(m.Epoch)); err != nil {
			return err
		}
	}
	if m.Final {
		return o.sink.Close()
	}
	return nil
}
