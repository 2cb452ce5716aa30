package op

import (
	"fmt"
	"reflect"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/exchange"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/runtime"
)

// opDecl is what a record operator declares about itself.
type opDecl struct {
	state plan.State
	sel   plan.Selectivity
	// user: the function is the user's, so its options declare its state
	// (Unkeyed unless they say otherwise) and may narrow its selectivity.
	user bool
	// key partitions a built-in keyed operator's input (Process).
	key *dataflow.KeySpec
	// takes: the options only some operators honour that this one does
	// (StateTTL for Process, IdleAfter for EventTime); it refuses others.
	takes takes
}

var (
	userOne       = opDecl{sel: plan.ExactlyOne, user: true}
	userAtMostOne = opDecl{sel: plan.AtMostOne, user: true}
	userAny       = opDecl{sel: plan.AnyNumber, user: true}
	builtinOne    = opDecl{state: plan.Stateless, sel: plan.ExactlyOne}
)

// recordOp adds a one-input record operator: fused into its input's task
// when the plan keeps records on their instance, else the head of a task
// fed through an inbox (in order, in an ordered job). mk makes the
// operator of one instance.
func recordOp[T, U any](s Stream[T], op string, d opDecl, opts []dataflow.Option, mk func(tc dataflow.TaskCtx, out dataflow.Pusher[U]) dataflow.Pusher[T]) Stream[U] {
	j := s.job
	c := dataflow.OpOptions(opts)
	st, sel, key := d.state, d.sel, d.key
	if d.user {
		st, key = c.State, c.Key
		if c.SelSet && d.sel == plan.AnyNumber {
			sel = c.Sel
		}
	}
	n := j.Add(&dataflow.Node{Name: c.Name, Op: op, Kind: plan.Op, State: st, Sel: sel, Par: c.Parallelism, ParSet: c.ParSet, Ports: singlePort[U]()})
	n.Params = dataflow.TypeList(reflect.TypeFor[T]()) + " to " + dataflow.TypeList(reflect.TypeFor[U]())
	refuseOptions(j, n.Name, c, d.takes)
	n.UserState = d.user && st != plan.Stateless
	n.Inputs = []dataflow.InputEdge{plainInput(s, j.Cfg.BatchSize)}
	if key != nil {
		if want := reflect.TypeFor[T](); key.In != want {
			j.Fail(fmt.Errorf("weir: %s: its key takes %v, but its input is %v", n.Name, key.In, want))
		} else {
			n.Inputs[0] = key.Input(s, j)
			n.Key = key.Name
		}
	}
	n.NewOp = func(tc dataflow.TaskCtx, outs []any) (any, error) {
		tc.Op, tc.Sel = n.Name, sel
		p := mk(tc, outs[0].(dataflow.Pusher[U]))
		saveOp(tc, n.Name, p)
		if key != nil && tc.Par > 1 {
			// Fused behind a region keyed by a key of the same name: check
			// that the claim holds.
			p = &ownerCheckOp[T]{check: key.Check(j, tc.View, tc.Inst).(func(*dataflow.Batch[T]) error), out: p}
		}
		return &guard[T]{name: n.Name, p: p}, nil
	}
	n.NewTask = func(tc dataflow.TaskCtx, outs []any) (runtime.InputTask, error) {
		tc.Op, tc.Sel = n.Name, sel
		op := mk(tc, outs[0].(dataflow.Pusher[U]))
		saveOp(tc, n.Name, op)
		p := &guard[T]{name: n.Name, p: op}
		if tc.Recv != nil {
			return exchange.NewOrdTask[T](*tc.Recv, tc.Units, p), nil
		}
		return &passTask[T]{out: p}, nil
	}
	return Stream[U]{job: j, node: n, timed: s.timed}
}

// saveOp registers an operator whose state checkpoints save.
func saveOp(tc dataflow.TaskCtx, name string, p any) {
	switch p.(type) {
	case dataflow.KeyedSnapshotter, dataflow.InstanceSnapshotter:
		tc.Saves(name, p)
	}
}

// ownerCheckOp fails the job when a record reaches an instance that does
// not own its key's group: the key a region was partitioned by did not
// flow through unchanged, as the shared key name claimed.
type ownerCheckOp[T any] struct {
	check func(*dataflow.Batch[T]) error
	out   dataflow.Pusher[T]
}

func (o *ownerCheckOp[T]) Push(b *dataflow.Batch[T]) error {
	if err := o.check(b); err != nil {
		return err
	}
	return o.out.Push(b)
}

func (o *ownerCheckOp[T]) Mark(m progress.Marker) error { return o.out.Mark(m) }

func newOwnerCheck[K comparable, T any](key func(T) K, view *routing.View, inst int, dist bool) func(*dataflow.Batch[T]) error {
	h := exchange.KeyHasher[K](dist)
	return func(b *dataflow.Batch[T]) error {
		rt := view.Table()
		n := b.Len()
		for j := 0; j < n; j++ {
			i := j
			if b.Sel != nil {
				i = int(b.Sel[j])
			}
			k := key(b.V[i])
			if kg := partition.KeyGroupOf(h(k), rt.Groups()); !rt.Owns(inst, kg) {
				return fmt.Errorf("weir: key %v (key group %d) reached instance %d, which does not own it (instance %d does): the key changed since the region was partitioned by a key of the same name", k, kg, inst, rt.Owner(kg))
			}
		}
		return nil
	}
}
