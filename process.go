package weir

import (
	"reflect"

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
	d.key.input = func(any, *Job) input { return recordKeyedInput(k) }
	d.key.check = func(j *Job, inst, par int) any {
		return newOwnerCheck(k.key, j.cfg.keyGroups, inst, par, j.stableHash())
	}
	return recordOp(k.s, "process", d, opts, func(tc taskCtx, out pusher[U]) pusher[T] {
		h := keyHasher[K](k.s.job.stableHash())
		table := newKeyedTable[K, S]()
		tc.saves(tc.op, &processState[K, S]{table: table})
		call := func(v T, out []U) []U {
			key := k.key(v)
			return f(key, table.Upsert(h(key), key), v, out)
		}
		return &flatMapOp[T, U]{f: call, out: out, name: tc.op, sel: tc.sel}
	})
}
