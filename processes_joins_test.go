package weir_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

func init() {
	procScenarios["joins"] = joinsScenario
}

// joinsScenario runs every operator of joins.go in one job: both record
// joins, TopN and ArgMax over counts (keyed by window, a struct key that
// every process must hash alike), and WindowAll.
func joinsScenario(j *weir.Job) func() []string {
	left, right := genRecs(71, 3000, 37, maxDelay), genRecs(72, 2000, 37, maxDelay)
	ls := weir.EventTime(weir.Source(j, "left", weir.SliceSource[rec]{Records: left, BatchSize: 64}), recTS, outOfOrder)
	rs := weir.EventTime(weir.Source(j, "right", weir.SliceSource[rec]{Records: right, BatchSize: 64}), recTS, outOfOrder)
	lk, rk := weir.KeyBy(ls, recKey), weir.KeyBy(rs, recKey)
	pairs := weir.Union(weir.IntervalJoin(lk, rk, -10*time.Millisecond, 20*time.Millisecond, joinRecs),
		weir.Map(weir.InnerJoin(lk, rk, joinRecs), func(p joined) joined { p.Key += "/inner"; return p }, weir.Stateless()))
	joinOut := &weir.Collect[joined]{}
	weir.Sink(pairs, joinOut)
	counts := weir.Count(weir.Window(lk, weir.Sliding(100*time.Millisecond, 50*time.Millisecond)))
	less := func(a, b int64) bool { return a < b }
	ranked := weir.Union(weir.TopN(counts, 2, less), weir.Map(weir.ArgMax(counts, less), func(r countResult) countResult { r.Key += "/max"; return r }, weir.Stateless()))
	rankOut := &weir.Collect[countResult]{}
	weir.Sink(ranked, rankOut)
	all := &weir.Collect[weir.WindowResult[weir.Unit, int64]]{}
	weir.Sink(weir.Count(weir.WindowAll(rs, weir.Tumbling(100*time.Millisecond))), all)
	return func() []string {
		var l []string
		for _, p := range joinOut.Records() {
			l = append(l, fmt.Sprintf("pair %+v", p))
		}
		for _, r := range rankOut.Records() {
			l = append(l, fmt.Sprintf("rank %+v", r))
		}
		for _, r := range all.Records() {
			l = append(l, fmt.Sprintf("all %+v", r))
		}
		slices.Sort(l)
		return l
	}
}

// The joins, rankings and WindowAll over 2 OS processes give the results
// of one process.
func TestJoinsAsProcesses(t *testing.T) {
	for _, strategy := range []string{"hash", "roundrobin"} {
		single := weir.NewJob("single", weir.Workers(2), weir.EpochRecords(500), weir.Partitioning(strategy))
		res := joinsScenario(single)
		if err := runErr(t, single); err != nil {
			t.Fatal(err)
		}
		want := res()
		if len(want) < 1000 {
			t.Fatalf("%d results: the scenario is too small", len(want))
		}
		got, errs := runAsProcesses(t, "joins", 2, "WEIR_TEST_PARTITIONING="+strategy)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s: process %d: %v", strategy, i, err)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d results over 2 processes; want %d", strategy, len(got), len(want))
		}
	}
}
