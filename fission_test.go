package weir_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// frec is a record of the randomized fission tests. Sub tells apart the
// outputs a prolific operator made of one record; Seq is stamped by an
// operator with unkeyed state.
type frec struct {
	ID, Sub, Key int
	Val, Seq     int64
}

func fless(a, b frec) int {
	if c := a.ID - b.ID; c != 0 {
		return c
	}
	if c := a.Sub - b.Sub; c != 0 {
		return c
	}
	if c := a.Key - b.Key; c != 0 {
		return c
	}
	if a.Val != b.Val {
		return cmpInt64(a.Val, b.Val)
	}
	return cmpInt64(a.Seq, b.Seq)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fstage is one operator of a random pipeline.
type fstage struct {
	kind string // map, filter, flatmap, process, keyedstate, stateful
	par  int    // 0: the planner decides
	key  int    // keyed stages: 0 keys by Key, 1 by Key%5
}

func (s fstage) String() string {
	return fmt.Sprintf("%s(par %d, key %d)", s.kind, s.par, s.key)
}

func keyFn(which int) (string, func(frec) int) {
	if which == 0 {
		return "key", func(r frec) int { return r.Key }
	}
	return "key5", func(r frec) int { return r.Key % 5 }
}

// The per-record functions, shared by the engine and the reference.
func fmapFn(r frec) frec { r.Val = r.Val*31 + int64(r.Key); return r }

func ffilterFn(r frec) bool { return (r.Val^int64(r.ID))%3 != 0 }

func fflatFn(r frec, out []frec) []frec {
	n := int(uint64(r.Val)>>1) % 3
	for i := range n {
		c := r
		c.Sub = r.Sub*3 + i
		c.Val = r.Val + int64(i)
		out = append(out, c)
	}
	return out
}

// keyedFn is a keyed operator's step. Ordered: the running sum of Val per
// key, which depends on the order of a key's records. Unordered: every
// record passes, and every third record of a key adds a record with the
// count, a multiset that does not depend on order.
func keyedFn(ordered bool) func(k int, state *int64, r frec, out []frec) []frec {
	if ordered {
		return func(_ int, sum *int64, r frec, out []frec) []frec {
			*sum += r.Val
			r.Val = *sum
			return append(out, r)
		}
	}
	return func(k int, n *int64, r frec, out []frec) []frec {
		*n++
		out = append(out, r)
		if *n%3 == 0 {
			out = append(out, frec{ID: -1, Key: k, Val: *n})
		}
		return out
	}
}

// statefulFn is an operator with unkeyed state: a counter over all
// records. Ordered: it stamps each record with its rank. Unordered: every
// fourth record adds one with the count.
func statefulFn(ordered bool) func(r frec, out []frec) []frec {
	var n int64
	if ordered {
		return func(r frec, out []frec) []frec { n++; r.Seq = n; return append(out, r) }
	}
	return func(r frec, out []frec) []frec {
		n++
		out = append(out, r)
		if n%4 == 0 {
			out = append(out, frec{ID: -2, Val: n})
		}
		return out
	}
}

// reference runs the pipeline as a plain loop over the records.
func fissionReference(in []frec, stages []fstage, ordered bool) []frec {
	cur := slices.Clone(in)
	for _, s := range stages {
		var next []frec
		switch s.kind {
		case "map":
			for _, r := range cur {
				next = append(next, fmapFn(r))
			}
		case "filter":
			for _, r := range cur {
				if ffilterFn(r) {
					next = append(next, r)
				}
			}
		case "flatmap":
			for _, r := range cur {
				next = fflatFn(r, next)
			}
		case "process", "keyedstate":
			_, key := keyFn(s.key)
			state := map[int]*int64{}
			f := keyedFn(ordered)
			for _, r := range cur {
				k := key(r)
				if state[k] == nil {
					state[k] = new(int64)
				}
				next = f(k, state[k], r, next)
			}
		case "stateful":
			f := statefulFn(ordered)
			for _, r := range cur {
				next = f(r, next)
			}
		}
		cur = next
	}
	return cur
}

// exclusive fails the test if its function is ever entered by two
// goroutines at once: an operator with unkeyed state must run in one
// instance.
type exclusive struct {
	busy atomic.Bool
	bad  atomic.Int64
}

func (e *exclusive) wrap(f func(frec, []frec) []frec) func(frec, []frec) []frec {
	return func(r frec, out []frec) []frec {
		if !e.busy.CompareAndSwap(false, true) {
			e.bad.Add(1)
			return f(r, out)
		}
		defer e.busy.Store(false)
		time.Sleep(0) // widen the window a little
		return f(r, out)
	}
}

// fissionJob builds the pipeline on the engine.
func fissionJob(j *weir.Job, in []frec, stages []fstage, ordered bool, batch int, ex []exclusive) *weir.Collect[frec] {
	s := weir.Source(j, "src", weir.SliceSource[frec]{Records: in, BatchSize: batch})
	for i, st := range stages {
		opts := []weir.Option{weir.Name(fmt.Sprintf("%d-%s", i, st.kind))}
		if st.par > 0 && st.kind != "stateful" {
			opts = append(opts, weir.Parallelism(st.par))
		}
		switch st.kind {
		case "map":
			s = weir.Map(s, fmapFn, append(opts, weir.Stateless())...)
		case "filter":
			s = weir.Filter(s, ffilterFn, append(opts, weir.Stateless())...)
		case "flatmap":
			s = weir.FlatMap(s, fflatFn, append(opts, weir.Stateless())...)
		case "process":
			name, key := keyFn(st.key)
			f := keyedFn(ordered)
			if ordered {
				opts = append(opts, weir.Selectivity(weir.ExactlyOne))
			}
			s = weir.Process(weir.KeyBy(s, key, weir.Name(name)), func(k int, sum *int64, r frec, out []frec) []frec {
				return f(k, sum, r, out)
			}, opts...)
		case "keyedstate":
			// State the function keeps itself, per key, behind a lock:
			// instances call it at once for different keys.
			name, key := keyFn(st.key)
			f := keyedFn(ordered)
			var mu sync.Mutex
			state := map[int]*int64{}
			s = weir.FlatMap(s, func(r frec, out []frec) []frec {
				mu.Lock()
				defer mu.Unlock()
				k := key(r)
				if state[k] == nil {
					state[k] = new(int64)
				}
				return f(k, state[k], r, out)
			}, append(opts, weir.KeyedState(name, key))...)
		case "stateful":
			// Declares nothing: the planner must keep it in one instance.
			s = weir.FlatMap(s, ex[i].wrap(statefulFn(ordered)), opts...)
		}
	}
	out := &weir.Collect[frec]{}
	weir.Sink(s, out, weir.Name("out"))
	return out
}

func randomStages(r *rand.Rand) []fstage {
	kinds := []string{"map", "filter", "flatmap", "process", "keyedstate", "stateful"}
	stages := make([]fstage, 1+r.IntN(6))
	for i := range stages {
		stages[i] = fstage{kind: kinds[r.IntN(len(kinds))], key: r.IntN(2)}
		if r.IntN(3) == 0 {
			stages[i].par = 1 + r.IntN(8)
		}
	}
	return stages
}

func randomRecords(r *rand.Rand) []frec {
	in := make([]frec, r.IntN(3000))
	keys := 1 + r.IntN(40)
	for i := range in {
		in[i] = frec{ID: i, Key: int(r.ExpFloat64()*float64(keys)) % 64, Val: r.Int64N(1000)}
	}
	return in
}

// Random pipelines of stateless, keyed, selective, prolific and unkeyed
// stateful operators at random parallelism 1-8, run by the engine, against
// the same pipeline as a plain loop: record for record with Ordered, as a
// multiset without.
func TestFissionRandomPipelines(t *testing.T) {
	cases := 80
	if testing.Short() {
		cases = 20
	}
	for _, ordered := range []bool{true, false} {
		for c := range cases {
			seed := uint64(c)*7919 + 17
			if !ordered {
				seed += 1 << 20
			}
			r := rand.New(rand.NewPCG(seed, 3))
			in := randomRecords(r)
			stages := randomStages(r)
			workers := 1 + r.IntN(8)
			batch := 1 + r.IntN(64)
			jopts := []weir.JobOption{weir.Workers(workers), weir.BatchSize(1 + r.IntN(64))}
			if r.IntN(2) == 0 {
				jopts = append(jopts, weir.EpochRecords(1+r.IntN(400)))
			} else {
				jopts = append(jopts, weir.BatchInterval(time.Millisecond))
			}
			if ordered {
				jopts = append(jopts, weir.Ordered())
			}
			j := weir.NewJob("fission", jopts...)
			ex := make([]exclusive, len(stages))
			out := fissionJob(j, in, stages, ordered, batch, ex)
			desc := fmt.Sprintf("ordered=%v seed %d workers %d records %d stages %v", ordered, seed, workers, len(in), stages)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err := j.Run(ctx)
			cancel()
			if err != nil {
				plan, _ := j.Explain()
				t.Fatalf("%s: %v\n%s", desc, err, plan)
			}
			for i := range ex {
				if n := ex[i].bad.Load(); n > 0 {
					t.Errorf("%s: stage %d, with unkeyed state, ran in two goroutines at once (%d times)", desc, i, n)
				}
			}
			got, want := out.Records(), fissionReference(in, stages, ordered)
			if !ordered {
				slices.SortFunc(got, fless)
				slices.SortFunc(want, fless)
			}
			if !slices.Equal(got, want) {
				plan, _ := j.Explain()
				t.Fatalf("%s: %d records, want %d; first difference at %d\n%s", desc, len(got), len(want), firstDiff(got, want), plan)
			}
		}
	}
}

func firstDiff(a, b []frec) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
