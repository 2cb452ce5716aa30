package weir_test

import (
	"cmp"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// winModel assigns the records of in to the windows of each key, as the
// window operator should when no record is late.
type winModel struct {
	name string
	spec func() weir.WindowSpec
	opts []weir.WindowOption
	// assign returns the windows of each key with their records.
	assign func(in []rec) map[winKey][]rec
}

// fixedWindows is the model of windows that depend on the timestamp only.
func fixedWindows(f func(ts int64) [][2]int64) func(in []rec) map[winKey][]rec {
	return func(in []rec) map[winKey][]rec {
		m := map[winKey][]rec{}
		for _, r := range in {
			for _, w := range f(r.TS) {
				k := winKey{r.Key, w[0], w[1]}
				m[k] = append(m[k], r)
			}
		}
		return m
	}
}

// sessions is the model of session windows: per key, records in time order,
// a new session whenever a record is at or past the current session's end
// (last timestamp + gap).
func sessions(gap int64) func(in []rec) map[winKey][]rec {
	return func(in []rec) map[winKey][]rec {
		byKey := map[string][]rec{}
		for _, r := range in {
			byKey[r.Key] = append(byKey[r.Key], r)
		}
		m := map[winKey][]rec{}
		for key, rs := range byKey {
			slices.SortFunc(rs, func(a, b rec) int { return cmp.Compare(a.TS, b.TS) })
			var cur []rec
			end := int64(math.MinInt64)
			emit := func() {
				if len(cur) > 0 {
					m[winKey{key, cur[0].TS, end}] = cur
				}
			}
			for _, r := range rs {
				if r.TS >= end {
					emit()
					cur = nil
				}
				cur = append(cur, r)
				end = max(end, r.TS+gap)
			}
			emit()
		}
		return m
	}
}

func winModels() []winModel {
	tumbling := fixedWindows(func(ts int64) [][2]int64 {
		s := ts - ts%100
		return [][2]int64{{s, s + 100}}
	})
	return []winModel{
		{"tumbling", func() weir.WindowSpec { return weir.Tumbling(100 * time.Millisecond) }, nil, tumbling},
		{"tumbling-lateness", func() weir.WindowSpec { return weir.Tumbling(100 * time.Millisecond) },
			[]weir.WindowOption{weir.AllowedLateness(30 * time.Millisecond)}, tumbling},
		{"sliding", func() weir.WindowSpec { return weir.Sliding(100*time.Millisecond, 30*time.Millisecond) }, nil,
			fixedWindows(func(ts int64) [][2]int64 {
				var out [][2]int64
				for s := ts - ts%30; s > ts-100; s -= 30 {
					out = append(out, [2]int64{s, s + 100})
				}
				return out
			})},
		{"session", func() weir.WindowSpec { return weir.Session(60 * time.Millisecond) }, nil, sessions(60)},
		{"global", weir.Global, nil, fixedWindows(func(int64) [][2]int64 { return [][2]int64{{math.MinInt64, math.MaxInt64}} })},
	}
}

// sumRec is the Reduce function of the tests: commutative and associative,
// so its result does not depend on arrival order.
func sumRec(a, b rec) rec {
	return rec{ID: a.ID + b.ID, Key: a.Key, TS: max(a.TS, b.TS), Val: a.Val + b.Val}
}

// avgAcc is an accumulator of another type than the records and results.
type avgAcc struct{ sum, n int64 }

var average = weir.Aggregator[rec, avgAcc, float64]{
	Add:    func(a avgAcc, r rec) avgAcc { return avgAcc{a.sum + r.Val, a.n + 1} },
	Merge:  func(a, b avgAcc) avgAcc { return avgAcc{a.sum + b.sum, a.n + b.n} },
	Result: func(a avgAcc) float64 { return float64(a.sum) / float64(a.n) },
}

// results turns the model's windows into the expected window results.
func results[R any](m map[winKey][]rec, f func([]rec) R) []weir.WindowResult[string, R] {
	var out []weir.WindowResult[string, R]
	for k, rs := range m {
		out = append(out, weir.WindowResult[string, R]{Key: k.Key, Start: k.Start, End: k.End, Value: f(rs)})
	}
	return out
}

func TestWindowAggregatesAgainstModel(t *testing.T) {
	in := genRecs(21, 8000, 37, maxDelay)
	for _, wm := range winModels() {
		want := wm.assign(in)
		t.Run(wm.name, func(t *testing.T) {
			for _, c := range runCfgs() {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					window := func(j *weir.Job) weir.WindowedStream[string, rec] {
						return weir.Window(weir.KeyBy(timedSource(c, j, "src", in), recKey), wm.spec(), wm.opts...)
					}
					t.Run("count", func(t *testing.T) {
						j := c.job()
						out := &bag[weir.WindowResult[string, int64]]{}
						weir.Sink(weir.Count(window(j)), out)
						run(t, j)
						checkBag(t, out.out, results(want, func(rs []rec) int64 { return int64(len(rs)) }))
					})
					t.Run("reduce", func(t *testing.T) {
						j := c.job()
						out := &bag[weir.WindowResult[string, rec]]{}
						weir.Sink(weir.Reduce(window(j), sumRec), out)
						run(t, j)
						checkBag(t, out.out, results(want, func(rs []rec) rec {
							acc := rs[0]
							for _, r := range rs[1:] {
								acc = sumRec(acc, r)
							}
							return acc
						}))
					})
					t.Run("aggregate-init", func(t *testing.T) {
						// The accumulator starts from Init, not the zero value.
						j := c.job()
						out := &bag[weir.WindowResult[string, int64]]{}
						weir.Sink(weir.Aggregate(window(j), weir.Aggregator[rec, int64, int64]{
							Init:  func() int64 { return math.MaxInt64 },
							Add:   func(a int64, r rec) int64 { return min(a, r.Val) },
							Merge: func(a, b int64) int64 { return min(a, b) },
						}), out)
						run(t, j)
						checkBag(t, out.out, results(want, func(rs []rec) int64 {
							return slices.MinFunc(rs, func(a, b rec) int { return cmp.Compare(a.Val, b.Val) }).Val
						}))
					})
					t.Run("aggregate", func(t *testing.T) {
						j := c.job()
						out := &bag[weir.WindowResult[string, float64]]{}
						weir.Sink(weir.Aggregate(window(j), average), out, weir.Parallelism(2))
						run(t, j)
						checkBag(t, out.out, results(want, func(rs []rec) float64 {
							var a avgAcc
							for _, r := range rs {
								a = average.Add(a, r)
							}
							return average.Result(a)
						}))
					})
				})
			}
		})
	}
}
