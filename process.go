package weir

import (
	"reflect"

	"github.com/weirstream/weir/internal/progress"

	"github.com/weirstream/weir/internal/plan"
)

// Process calls f for every record of a keyed stream with the state of
// the record's key: a pointer to an S, the zero value the first time the
// key is seen, that f may read and change. f appends any number of outputs
// to out and returns it (Selectivity may declare fewer). Records of one key
// reach f in the order the stream carries them, on one instance; each
// instance keeps the state of the key groups it owns, so Process runs in
// parallel without locks. The state lives as long as the job.
func Process[K comparable, T, S, U any](k KeyedStream[K, T], f func(key K, state *S, v T, out []U) []U, opts ...Option) Stream[U] {
	c := opOptions(opts)
	d := opDecl{state: plan.Keyed, sel: plan.AnyNumber, key: &keySpec{name: k.name, in: reflect.TypeFor[T]()}}
	if c.selSet {
		d.sel = c.sel
	}
	d.key.input = func(any, *graph) inputEdge { return recordKeyedInput(k) }
	d.key.check = func(j *graph, inst, par int) any {
		return newOwnerCheck(k.key, j.cfg.keyGroups, inst, par, j.stableHash())
	}
	return recordOp(k.s, "process", d, opts, func(tc taskCtx, out pusher[U]) pusher[T] {
		h := keyHasher[K](k.s.job.stableHash())
		table, err := newStore[K, S](k.s.job, tc.op, tc.inst)
		if err != nil {
			return &failOp[T]{err: err}
		}
		tc.saves(tc.op, &processState[K, S]{table: table})
		call := func(v T, out []U) []U {
			key := k.key(v)
			return f(key, table.Upsert(h(key), key), v, out)
		}
		op := &flatMapOp[T, U]{f: call, out: out, name: tc.op, sel: tc.sel}
		if fl, ok := table.(flusher); ok {
			return &flushOp[T]{pusher: op, f: fl}
		}
		return op
	})
}

// flushOp writes a disk store's epoch at each marker.
type flushOp[T any] struct {
	pusher[T]
	f flusher
}

func (o *flushOp[T]) mark(m progress.Marker) error {
	if err := o.f.flush(); err != nil {
		return err
	}
	return o.pusher.mark(m)
}

// failOp fails on its first batch or marker: an operator that could not be
// made.
type failOp[T any] struct{ err error }

func (o *failOp[T]) push(*batch[T]) error       { return o.err }
func (o *failOp[T]) mark(progress.Marker) error { return o.err }
