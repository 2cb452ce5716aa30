package weir

import (
	"fmt"
	"reflect"

	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
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
	key *keySpec
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
func recordOp[T, U any](s Stream[T], op string, d opDecl, opts []Option, mk func(tc taskCtx, out pusher[U]) pusher[T]) Stream[U] {
	j := s.job
	c := opOptions(opts)
	st, sel, key := d.state, d.sel, d.key
	if d.user {
		st, key = c.state, c.key
		if c.selSet && d.sel == plan.AnyNumber {
			sel = c.sel
		}
	}
	n := j.add(&node{name: c.name, op: op, kind: plan.Op, state: st, sel: sel, par: c.parallelism, parSet: c.parSet, ports: singlePort[U]()})
	n.params = typeList(reflect.TypeFor[T]()) + " to " + typeList(reflect.TypeFor[U]())
	n.userState = d.user && st != plan.Stateless
	n.inputs = []inputEdge{plainInput(s, j.cfg.batchSize)}
	if key != nil {
		if want := reflect.TypeFor[T](); key.in != want {
			j.fail(fmt.Errorf("weir: %s: its key takes %v, but its input is %v", n.name, key.in, want))
		} else {
			n.inputs[0] = key.input(s, j)
			n.key = key.name
		}
	}
	n.newOp = func(tc taskCtx, outs []any) (any, error) {
		tc.op, tc.sel = n.name, sel
		p := mk(tc, outs[0].(pusher[U]))
		saveOp(tc, n.name, p)
		if key != nil && tc.par > 1 {
			// Fused behind a region keyed by a key of the same name: check
			// that the claim holds.
			p = &ownerCheckOp[T]{check: key.check(j, tc.inst, tc.par).(func(*batch[T]) error), out: p}
		}
		return &guard[T]{name: n.name, p: p}, nil
	}
	n.newTask = func(tc taskCtx, outs []any) (runtime.InputTask, error) {
		tc.op, tc.sel = n.name, sel
		op := mk(tc, outs[0].(pusher[U]))
		saveOp(tc, n.name, op)
		p := &guard[T]{name: n.name, p: op}
		if tc.recv != nil {
			return newOrdTask[T](*tc.recv, tc.units, p), nil
		}
		return &passTask[T]{out: p}, nil
	}
	return Stream[U]{job: j, node: n, timed: s.timed}
}

// saveOp registers an operator whose state checkpoints save.
func saveOp(tc taskCtx, name string, p any) {
	switch p.(type) {
	case keyedSnapshotter, instanceSnapshotter:
		tc.saves(name, p)
	}
}

// ownerCheckOp fails the job when a record reaches an instance that does
// not own its key's group: the key a region was partitioned by did not
// flow through unchanged, as the shared key name claimed.
type ownerCheckOp[T any] struct {
	check func(*batch[T]) error
	out   pusher[T]
}

func (o *ownerCheckOp[T]) push(b *batch[T]) error {
	if err := o.check(b); err != nil {
		return err
	}
	return o.out.push(b)
}

func (o *ownerCheckOp[T]) mark(m progress.Marker) error { return o.out.mark(m) }

func newOwnerCheck[K comparable, T any](key func(T) K, groups, inst, par int, dist bool) func(*batch[T]) error {
	h := keyHasher[K](dist)
	r := partition.RangeOf(inst, groups, par)
	return func(b *batch[T]) error {
		n := b.len()
		for j := 0; j < n; j++ {
			i := j
			if b.sel != nil {
				i = int(b.sel[j])
			}
			k := key(b.v[i])
			if kg := partition.KeyGroupOf(h(k), groups); !r.Contains(kg) {
				return fmt.Errorf("weir: key %v (key group %d) reached instance %d, which owns key groups %v: the key changed since the region was partitioned by a key of the same name", k, kg, inst, r)
			}
		}
		return nil
	}
}

// recordKeyedInput is the edge into a keyed record operator: records go,
// unchanged, to the owner of their key's group.
func recordKeyedInput[K comparable, T any](k KeyedStream[K, T]) inputEdge {
	j := k.s.job
	return inputEdge{
		from: k.s.node, fromPort: k.s.port, keyed: true,
		exchange: func(x exchangeCtx) any {
			if x.ordered {
				return &guard[T]{name: x.name, p: newOrdKeyEx(k.key, j.cfg.keyGroups, x, j.cfg.batchSize, k.s.timed)}
			}
			return &guard[T]{name: x.name, p: newRouteEx(k.key, j.cfg.keyGroups, x.outlets, j.cfg.batchSize, k.s.timed, x.dist)}
		},
		wire: func() (wire, error) { return newBatchWire[T](j.cfg.batchSize, k.s.timed) },
	}
}
