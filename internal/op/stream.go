package op

import (
	"fmt"
	"runtime/debug"

	"github.com/weirstream/weir/internal/dataflow"
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
	// sides, on the output of a KeyedProcess or CoProcess, are its side
	// outputs (see Side).
	sides *sideReg
}

// singlePort is the ports table of a node with one output of type T.
func singlePort[T any]() []func([]any) any {
	return []func([]any) any{func(outs []any) any { return dataflow.Combine[T](outs) }}
}

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
