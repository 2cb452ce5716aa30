package weir_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// allWindows is the model of WindowAll: the windows of all records taken
// together, as if they had one key.
func allWindows(wm winModel, in []rec) map[winKey][]rec {
	flat := slices.Clone(in)
	for i := range flat {
		flat[i].Key = ""
	}
	return wm.assign(flat)
}

// unitResults turns the model's windows into WindowAll's results.
func unitResults[R any](m map[winKey][]rec, f func([]rec) R) []weir.WindowResult[weir.Unit, R] {
	var out []weir.WindowResult[weir.Unit, R]
	for k, rs := range m {
		out = append(out, weir.WindowResult[weir.Unit, R]{Start: k.Start, End: k.End, Value: f(rs)})
	}
	return out
}

// smallCfgs are runCfgs at 1, 2 and 4 workers.
func smallCfgs() []runCfg {
	return slices.DeleteFunc(runCfgs(), func(c runCfg) bool { return c.workers > 4 })
}

// sumVals sums records whatever their keys (so the result does not depend
// on the order of the fold).
func sumVals(a, b rec) rec { return rec{ID: a.ID + b.ID, TS: max(a.TS, b.TS), Val: a.Val + b.Val} }

func foldSum(rs []rec) rec {
	acc := rec{ID: rs[0].ID, TS: rs[0].TS, Val: rs[0].Val}
	for _, r := range rs[1:] {
		acc = sumVals(acc, r)
	}
	return acc
}

// WindowAll's results equal a single fold over all records of each
// window, for every window kind, partitioning strategy, worker count and
// way of cutting epochs.
func TestWindowAllAgainstModel(t *testing.T) {
	in := genRecs(51, 2000, 37, maxDelay)
	for _, wm := range winModels() {
		want := allWindows(wm, in)
		t.Run(wm.name, func(t *testing.T) {
			for _, strategy := range strategies {
				for _, c := range smallCfgs() {
					t.Run(strategy+"/"+c.name, func(t *testing.T) {
						t.Parallel()
						j := weir.NewJob("model", append(slices.Clone(c.opts), weir.Partitioning(strategy))...)
						s := timedSource(c, j, "src", in)
						counts := &bag[weir.WindowResult[weir.Unit, int64]]{}
						weir.Sink(weir.Count(weir.WindowAll(s, wm.spec(), wm.opts...)), counts)
						sums := &bag[weir.WindowResult[weir.Unit, rec]]{}
						// A window of one record reduces to that record, key and all;
						// the model's records have no key.
						reduced := weir.Reduce(weir.WindowAll(s, wm.spec(), wm.opts...), sumVals)
						weir.Sink(weir.Map(reduced, func(r weir.WindowResult[weir.Unit, rec]) weir.WindowResult[weir.Unit, rec] {
							r.Value.Key = ""
							return r
						}, weir.Stateless()), sums)
						means := &bag[weir.WindowResult[weir.Unit, float64]]{}
						weir.Sink(weir.Aggregate(weir.WindowAll(s, wm.spec(), wm.opts...), average), means)
						run(t, j)
						checkBag(t, counts.out, unitResults(want, func(rs []rec) int64 { return int64(len(rs)) }))
						checkBag(t, sums.out, unitResults(want, foldSum))
						checkBag(t, means.out, unitResults(want, func(rs []rec) float64 {
							var a avgAcc
							for _, r := range rs {
								a = average.Add(a, r)
							}
							return average.Result(a)
						}))
					})
				}
			}
		})
	}
}

// parts counts the records of a window and the accumulators merged into
// its result: it shows where records were folded.
type parts struct{ N, Parts int64 }

var countParts = weir.Aggregator[rec, parts, parts]{
	Add: func(p parts, _ rec) parts { return parts{p.N + 1, 1} },
	Merge: func(a, b parts) parts {
		return parts{a.N + b.N, a.Parts + b.Parts}
	},
}

// WindowAll runs one window instance, fed by pre-aggregation under
// roundrobin (each sender folds its epoch's records per window: a window
// merges a few accumulators, not its records) and by raw records under
// hash (one accumulator).
func TestWindowAllPreAggregates(t *testing.T) {
	in := genRecs(52, 20000, 37, maxDelay)
	for _, strategy := range []string{"roundrobin", "hash"} {
		j := weir.NewJob("preagg", weir.Workers(4), weir.EpochRecords(500), weir.Partitioning(strategy))
		s := weir.EventTime(weir.Source(j, "src", weir.SliceSource[rec]{Records: in}), recTS, outOfOrder)
		out := &bag[weir.WindowResult[weir.Unit, parts]]{}
		weir.Sink(weir.Aggregate(weir.WindowAll(s, weir.Tumbling(time.Second), weir.WindowOptions(weir.Name("all"))), countParts), out)
		plan, err := j.Explain()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "x1  serial") || !strings.Contains(plan, "all [windowAll(tumbling 1s) "+strategy) {
			t.Errorf("%s: the window does not run as one instance:\n%s", strategy, plan)
		}
		run(t, j)
		var n int64
		for _, r := range out.out {
			n += r.Value.N
			switch {
			case strategy == "hash" && r.Value.Parts != 1:
				t.Errorf("hash: window %d folded %d accumulators; want 1 (raw records)", r.Start, r.Value.Parts)
			case strategy == "roundrobin" && (r.Value.Parts < 2 || r.Value.Parts > r.Value.N/50):
				t.Errorf("roundrobin: window %d of %d records merged %d accumulators; want a few (one per sender and epoch)", r.Start, r.Value.N, r.Value.Parts)
			}
		}
		if n != int64(len(in)) || len(out.out) < 10 {
			t.Errorf("%s: %d records in %d windows; want %d in at least 10", strategy, n, len(out.out), len(in))
		}
	}
}

// WindowAll over 2 processes (where pkg and prompt are refused) gives the
// model's results: the one window instance runs on process 0 and the
// other process's senders pre-aggregate (roundrobin) or send raw (hash).
func TestWindowAllDistributed(t *testing.T) {
	in := genRecs(53, 6000, 37, maxDelay)
	wm := winModels()[2] // sliding
	want := unitResults(allWindows(wm, in), func(rs []rec) int64 { return int64(len(rs)) })
	for _, strategy := range []string{"hash", "roundrobin"} {
		opts := []weir.JobOption{weir.Workers(2), weir.EpochRecords(100), weir.Partitioning(strategy)}
		got, errs := runProcesses(t, 2, opts, func(j *weir.Job) *weir.Collect[weir.WindowResult[weir.Unit, int64]] {
			s := weir.EventTime(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 64}), recTS, outOfOrder)
			out := &weir.Collect[weir.WindowResult[weir.Unit, int64]]{}
			weir.Sink(weir.Count(weir.WindowAll(s, wm.spec())), out)
			return out
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s: process %d: %v", strategy, i, err)
			}
		}
		checkBag(t, got, want)
	}
}
