package weir_test

import (
	"math"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// topologyCases exercise plan shapes beyond a straight chain: a stream read
// twice, self-joins, capped and explicit parallelism of keyed operators.
func topologyCases() []opCase {
	type wres = weir.WindowResult[string, int64]
	return []opCase{
		pipeline("union-of-itself", func(c runCfg, j *weir.Job, in []rec) weir.Stream[rec] {
			s := source(c, j, "src", in)
			return weir.Union(s, s)
		}, func(in []rec) []rec { return append(append([]rec(nil), in...), in...) }),
		pipeline("two-branches", func(c runCfg, j *weir.Job, in []rec) weir.Stream[string] {
			s := source(c, j, "src", in)
			return weir.Union(weir.Map(weir.Filter(s, even, weir.Stateless()), label, weir.Stateless()), weir.Map(s, func(r rec) string { return r.Key }, weir.Stateless()))
		}, func(in []rec) []string {
			return append(mapSlice(filterSlice(in, even), label), mapSlice(in, recKey)...)
		}),
		pipeline("window-parallelism-3", func(c runCfg, j *weir.Job, in []rec) weir.Stream[wres] {
			ws := weir.Window(weir.KeyBy(timedSource(c, j, "src", in), recKey), weir.Tumbling(100*time.Millisecond),
				weir.WindowOptions(weir.Parallelism(3), weir.Name("w")))
			return weir.Count(ws)
		}, func(in []rec) []wres { return tumbleCount(in, 100) }),
		pipeline("two-windows-one-stream", func(c runCfg, j *weir.Job, in []rec) weir.Stream[wres] {
			k := weir.KeyBy(timedSource(c, j, "src", in), recKey)
			a := weir.Count(weir.Window(k, weir.Tumbling(100*time.Millisecond)))
			b := weir.Count(weir.Window(k, weir.Tumbling(50*time.Millisecond)))
			return weir.Union(a, b)
		}, func(in []rec) []wres { return append(tumbleCount(in, 100), tumbleCount(in, 50)...) }),
		pipeline("int-key", func(c runCfg, j *weir.Job, in []rec) weir.Stream[weir.WindowResult[int64, int64]] {
			return weir.Count(weir.Window(weir.KeyBy(source(c, j, "src", in), func(r rec) int64 { return r.Val % 17 }), weir.Global()))
		}, func(in []rec) []weir.WindowResult[int64, int64] {
			return globalCount(in, func(r rec) int64 { return r.Val % 17 })
		}),
		pipeline("struct-key", func(c runCfg, j *weir.Job, in []rec) weir.Stream[weir.WindowResult[pair, int64]] {
			return weir.Count(weir.Window(weir.KeyBy(source(c, j, "src", in), recPair), weir.Global()))
		}, func(in []rec) []weir.WindowResult[pair, int64] { return globalCount(in, recPair) }),
		pipeline("join-global-without-event-time", func(c runCfg, j *weir.Job, in []rec) weir.Stream[joined] {
			l := weir.KeyBy(source(c, j, "left", in[:600]), recKey)
			r := weir.KeyBy(source(c, j, "right", in[600:1000], weir.Parallelism(3)), recKey)
			return weir.Join(l, r, weir.Global(), joinRecs)
		}, func(in []rec) []joined {
			all := fixedWindows(func(int64) [][2]int64 { return [][2]int64{{0, 1}} })
			return nestedLoopJoin(all(in[:600]), all(in[600:1000]))
		}),
		pipeline("self-join", func(c runCfg, j *weir.Job, in []rec) weir.Stream[joined] {
			k := weir.KeyBy(timedSource(c, j, "src", in), recKey)
			return weir.Join(k, k, weir.Tumbling(100*time.Millisecond), joinRecs)
		}, func(in []rec) []joined {
			w := fixedWindows(func(ts int64) [][2]int64 { return [][2]int64{{ts - ts%100, ts - ts%100 + 100}} })(in)
			return nestedLoopJoin(w, w)
		}),
	}
}

func TestTopologiesAgainstModel(t *testing.T) {
	in := genRecs(61, 3000, 13, maxDelay)
	for _, oc := range topologyCases() {
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

// TestFewKeyGroups runs keyed operators with as many workers as key
// groups, so every instance owns exactly one (more workers are refused;
// see TestBadOptions).
func TestFewKeyGroups(t *testing.T) {
	in := genRecs(62, 3000, 13, maxDelay)
	for _, groups := range []int{1, 3} {
		c := runCfg{name: "kg", workers: groups, opts: []weir.JobOption{weir.Workers(groups), weir.KeyGroups(groups), weir.BatchSize(16), weir.EpochRecords(37)}}
		j := c.job()
		out := &bag[weir.WindowResult[string, int64]]{}
		weir.Sink(countTumbling(timedSource(c, j, "src", in)), out)
		run(t, j)
		checkBag(t, out.out, tumbleCount(in, 100))
	}
}

func recPair(r rec) pair { return pair{int(r.Val % 5), len(r.Key)} }

// globalCount is the model of KeyBy(key)+Global+Count.
func globalCount[K comparable](in []rec, key func(rec) K) []weir.WindowResult[K, int64] {
	m := map[K]int64{}
	for _, r := range in {
		m[key(r)]++
	}
	var out []weir.WindowResult[K, int64]
	for k, n := range m {
		out = append(out, weir.WindowResult[K, int64]{Key: k, Start: math.MinInt64, End: math.MaxInt64, Value: n})
	}
	return out
}
