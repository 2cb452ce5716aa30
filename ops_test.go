package weir_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// opCase runs one pipeline on the engine and compares its output with a
// sequential computation of the same thing.
type opCase struct {
	name string
	run  func(t *testing.T, c runCfg, in []rec)
}

// pipeline makes an opCase whose engine output, a Stream[U] sunk into one
// sink, must equal model(in) as a multiset.
func pipeline[U comparable](name string, build func(c runCfg, j *weir.Job, in []rec) weir.Stream[U], model func(in []rec) []U) opCase {
	return opCase{name, func(t *testing.T, c runCfg, in []rec) {
		j := c.job()
		out := &bag[U]{}
		weir.Sink(build(c, j, in), out)
		run(t, j)
		checkBag(t, out.out, model(in))
		if out.closed != 1 {
			t.Errorf("sink closed %d times, want 1", out.closed)
		}
	}}
}

// mapSlice and filterSlice are the sequential models.
func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, 0, len(in))
	for _, v := range in {
		out = append(out, f(v))
	}
	return out
}

func filterSlice[T any](in []T, keep func(T) bool) []T {
	var out []T
	for _, v := range in {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

type pair struct{ ID, I int }

func explode(r rec, out []pair) []pair {
	for i := range int(r.Val % 4) {
		out = append(out, pair{r.ID, i})
	}
	return out
}

func label(r rec) string    { return fmt.Sprintf("%s/%d", r.Key, r.Val*3) }
func weigh(r *rec) int64    { return r.Val*2 + int64(r.ID) }
func third(r rec) bool      { return r.Val%3 == 0 }
func lowKey(r *rec) bool    { return r.Key < "k2" }
func even(r rec) bool       { return r.Val%2 == 0 }
func notThird(x int64) bool { return x%3 != 0 }
func valPlusID(r rec) int64 { return r.Val + int64(r.ID) }
func refVal(r *rec) int64   { return r.Val }
func deref(f func(*rec) bool) func(rec) bool {
	return func(r rec) bool { return f(&r) }
}

// tumbleCount is the model of KeyBy(Key)+Tumbling(size)+Count.
func tumbleCount(in []rec, size int64) []weir.WindowResult[string, int64] {
	m := map[winKey]int64{}
	for _, r := range in {
		s := r.TS - r.TS%size
		m[winKey{r.Key, s, s + size}]++
	}
	var out []weir.WindowResult[string, int64]
	for k, n := range m {
		out = append(out, weir.WindowResult[string, int64]{Key: k.Key, Start: k.Start, End: k.End, Value: n})
	}
	return out
}

func countTumbling(s weir.Stream[rec]) weir.Stream[weir.WindowResult[string, int64]] {
	return weir.Count(weir.Window(weir.KeyBy(s, recKey), weir.Tumbling(100*time.Millisecond)))
}

func opCases() []opCase {
	type wres = weir.WindowResult[string, int64]
	return []opCase{
		pipeline("map", func(c runCfg, j *weir.Job, in []rec) weir.Stream[string] {
			return weir.Map(source(c, j, "src", in), label, weir.Stateless())
		}, func(in []rec) []string { return mapSlice(in, label) }),
		pipeline("mapref", func(c runCfg, j *weir.Job, in []rec) weir.Stream[int64] {
			return weir.MapRef(source(c, j, "src", in), weigh, weir.Stateless())
		}, func(in []rec) []int64 { return mapSlice(in, func(r rec) int64 { return weigh(&r) }) }),
		pipeline("filter", func(c runCfg, j *weir.Job, in []rec) weir.Stream[rec] {
			return weir.Filter(source(c, j, "src", in), third, weir.Stateless())
		}, func(in []rec) []rec { return filterSlice(in, third) }),
		pipeline("filterref", func(c runCfg, j *weir.Job, in []rec) weir.Stream[rec] {
			return weir.FilterRef(source(c, j, "src", in), lowKey, weir.Stateless())
		}, func(in []rec) []rec { return filterSlice(in, deref(lowKey)) }),
		pipeline("flatmap", func(c runCfg, j *weir.Job, in []rec) weir.Stream[pair] {
			return weir.FlatMap(source(c, j, "src", in), explode, weir.Stateless())
		}, func(in []rec) []pair {
			var out []pair
			for _, r := range in {
				out = explode(r, out)
			}
			return out
		}),
		// Selections flowing through Map, and a selection of a selection.
		pipeline("filter-map-filter", func(c runCfg, j *weir.Job, in []rec) weir.Stream[int64] {
			return weir.Filter(weir.Map(weir.Filter(source(c, j, "src", in), even, weir.Stateless()), valPlusID, weir.Stateless()), notThird, weir.Stateless())
		}, func(in []rec) []int64 { return filterSlice(mapSlice(filterSlice(in, even), valPlusID), notThird) }),
		pipeline("filter-filterref-mapref", func(c runCfg, j *weir.Job, in []rec) weir.Stream[int64] {
			return weir.MapRef(weir.FilterRef(weir.Filter(source(c, j, "src", in), even, weir.Stateless()), lowKey, weir.Stateless()), refVal, weir.Stateless())
		}, func(in []rec) []int64 {
			return mapSlice(filterSlice(filterSlice(in, even), deref(lowKey)), func(r rec) int64 { return r.Val })
		}),
		// A stateless operator with its own parallelism runs in its own task.
		pipeline("map-parallelism-3", func(c runCfg, j *weir.Job, in []rec) weir.Stream[string] {
			return weir.Map(weir.Filter(source(c, j, "src", in), even, weir.Stateless()), label, weir.Parallelism(3), weir.Stateless())
		}, func(in []rec) []string { return mapSlice(filterSlice(in, even), label) }),
		// Event times must follow records through selections, Map and FlatMap.
		pipeline("eventtime-filter-map-window", func(c runCfg, j *weir.Job, in []rec) weir.Stream[wres] {
			s := weir.Filter(timedSource(c, j, "src", in), third, weir.Stateless())
			s = weir.Map(s, func(r rec) rec { r.Key += "x"; return r }, weir.Stateless())
			return countTumbling(s)
		}, func(in []rec) []wres {
			return tumbleCount(mapSlice(filterSlice(in, third), func(r rec) rec { r.Key += "x"; return r }), 100)
		}),
		pipeline("eventtime-flatmap-window", func(c runCfg, j *weir.Job, in []rec) weir.Stream[wres] {
			s := weir.FlatMap(weir.FilterRef(timedSource(c, j, "src", in), lowKey, weir.Stateless()), dup, weir.Stateless())
			return countTumbling(s)
		}, func(in []rec) []wres {
			var out []rec
			for _, r := range filterSlice(in, deref(lowKey)) {
				out = dup(r, out)
			}
			return tumbleCount(out, 100)
		}),
		pipeline("union2", func(c runCfg, j *weir.Job, in []rec) weir.Stream[rec] {
			h := len(in) / 3
			a := source(c, j, "a", in[:h], weir.Parallelism(1))
			b := source(c, j, "b", in[h:])
			return weir.Union(a, b)
		}, func(in []rec) []rec { return in }),
		pipeline("union3", func(c runCfg, j *weir.Job, in []rec) weir.Stream[string] {
			a := weir.Filter(source(c, j, "a", in[:1000], weir.Parallelism(1)), even, weir.Stateless())
			b := weir.Map(source(c, j, "b", in[1000:1500], weir.Parallelism(3)), func(r rec) rec { r.Val = -r.Val; return r }, weir.Stateless())
			d := source(c, j, "c", in[1500:])
			return weir.Map(weir.Union(a, b, d), label, weir.Stateless())
		}, func(in []rec) []string {
			u := filterSlice(in[:1000], even)
			u = append(u, mapSlice(in[1000:1500], func(r rec) rec { r.Val = -r.Val; return r })...)
			return mapSlice(append(u, in[1500:]...), label)
		}),
		// The watermark after a union is the minimum over its inputs.
		pipeline("union-timed-window", func(c runCfg, j *weir.Job, in []rec) weir.Stream[wres] {
			a := timedSource(c, j, "a", everyOther(in, 0), weir.Parallelism(1))
			b := timedSource(c, j, "b", everyOther(in, 1), weir.Parallelism(3))
			return countTumbling(weir.Union(a, b))
		}, func(in []rec) []wres { return tumbleCount(in, 100) }),
	}
}

func dup(r rec, out []rec) []rec {
	for range r.Val % 3 {
		out = append(out, r)
	}
	return out
}

func everyOther(in []rec, parity int) []rec {
	var out []rec
	for i, r := range in {
		if i%2 == parity {
			out = append(out, r)
		}
	}
	return out
}

func TestOperatorsAgainstModel(t *testing.T) {
	in := genRecs(11, 3000, 13, maxDelay)
	for _, oc := range opCases() {
		t.Run(oc.name, func(t *testing.T) {
			for _, c := range runCfgs() {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					oc.run(t, c, in)
				})
			}
		})
	}
}

func TestSinkParallelism(t *testing.T) {
	in := genRecs(12, 3000, 13, maxDelay)
	for _, c := range runCfgs() {
		for _, par := range []int{1, 3, c.workers} {
			t.Run(fmt.Sprintf("%s/sink%d", c.name, par), func(t *testing.T) {
				t.Parallel()
				j := c.job()
				out := &bag[string]{}
				weir.Sink(weir.Map(weir.Filter(source(c, j, "src", in), even, weir.Stateless()), label, weir.Stateless()), out, weir.Parallelism(par))
				run(t, j)
				checkBag(t, out.out, mapSlice(filterSlice(in, even), label))
				if out.closed != par {
					t.Errorf("sink closed %d times, want once per instance (%d)", out.closed, par)
				}
			})
		}
	}
}
