package op

import (
	"reflect"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/exchange"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/routing"
)

// Process calls f for every record of a keyed stream with the state of
// the record's key: a pointer to an S, the zero value the first time the
// key is seen, that f may read and change. f appends any number of outputs
// to out and returns it (Selectivity may declare fewer). Records of one key
// reach f in the order the stream carries them, on one instance; each
// instance keeps the state of the key groups it owns, so Process runs in
// parallel without locks. The state lives as long as the job, or as
// StateTTL says: every record touches its key's state.
func Process[K comparable, T, S, U any](k KeyedStream[K, T], f func(key K, state *S, v T, out []U) []U, opts ...dataflow.Option) Stream[U] {
	c := dataflow.OpOptions(opts)
	d := opDecl{state: plan.Keyed, sel: plan.AnyNumber, key: &dataflow.KeySpec{Name: k.name, In: reflect.TypeFor[T]()}, takes: takesTTL}
	if c.SelSet {
		d.sel = c.Sel
	}
	d.key.Input = func(any, *dataflow.Graph) dataflow.InputEdge { return recordKeyedInput(k) }
	d.key.Check = func(j *dataflow.Graph, view *routing.View, inst int) any {
		return newOwnerCheck(k.key, view, inst, j.StableHash())
	}
	out := recordOp(k.s, "process", d, opts, func(tc dataflow.TaskCtx, out dataflow.Pusher[U]) dataflow.Pusher[T] {
		h := exchange.KeyHasher[K](k.s.job.StableHash())
		if c.TTL.Set() {
			return newTTLProcess(k, h, f, tc, out, c.TTL)
		}
		table, err := newStore[K, S](k.s.job, tc.Op, tc.Inst)
		if err != nil {
			return &failOp[T]{err: err}
		}
		tc.Saves(tc.Op, &processState[K, S]{table: table})
		call := func(v T, out []U) []U {
			key := k.key(v)
			return f(key, table.Upsert(h(key), key), v, out)
		}
		op := &flatMapOp[T, U]{f: call, out: out, name: tc.Op, sel: tc.Sel}
		if fl, ok := table.(flusher); ok {
			return &flushOp[T]{Pusher: op, f: fl}
		}
		return op
	})
	out.node.Params += checkTTL(k.s.job, out.node.Name, c.TTL, k.s.timed)
	return out
}

// flushOp writes a disk store's epoch at each marker.
type flushOp[T any] struct {
	dataflow.Pusher[T]
	f flusher
}

func (o *flushOp[T]) Mark(m progress.Marker) error {
	if err := o.f.Flush(); err != nil {
		return err
	}
	return o.Pusher.Mark(m)
}

// failOp fails on its first batch or marker: an operator that could not be
// made.
type failOp[T any] struct{ err error }

func (o *failOp[T]) Push(*dataflow.Batch[T]) error { return o.err }
func (o *failOp[T]) Mark(progress.Marker) error    { return o.err }
