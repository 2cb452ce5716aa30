package weir_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// liveJob counts in per key and 50 ms window, and keeps a running count per
// key in a Process, on 4 workers whose keyed operators start over 2.
func liveJob(in []rec, opts ...weir.JobOption) (*weir.Job, *weir.Collect[weir.WindowResult[string, int64]], *weir.Collect[string]) {
	return liveJobThen(in, nil, opts...)
}

// liveJobThen is liveJob with then, if set, adding operators after the
// windows, whose outputs go with the running counts.
func liveJobThen(in []rec, then func(weir.Stream[weir.WindowResult[string, int64]], *weir.Collect[string]), opts ...weir.JobOption) (*weir.Job, *weir.Collect[weir.WindowResult[string, int64]], *weir.Collect[string]) {
	j := weir.NewJob("live", append([]weir.JobOption{weir.Workers(4), weir.BatchInterval(20 * time.Millisecond)}, opts...)...)
	s := weir.Source(j, "src", weir.Paced[rec](weir.SliceSource[rec]{Records: in, BatchSize: 32}, 8000))
	timed := weir.EventTime(s, func(r rec) int64 { return r.TS }, 10*time.Millisecond, weir.Name("time"))
	counts := weir.Count(weir.Window(weir.KeyBy(timed, func(r rec) string { return r.Key }), weir.Tumbling(50*time.Millisecond),
		weir.WindowOptions(weir.Name("count"))))
	wins := &weir.Collect[weir.WindowResult[string, int64]]{}
	weir.Sink(counts, wins, weir.Name("wins"))
	sums := weir.Process(weir.KeyBy(s, func(r rec) string { return r.Key }), func(k string, st *int, r rec, out []string) []string {
		*st++ // a count: the set of outputs does not depend on the order of one key's records
		return append(out, fmt.Sprintf("%s=%d", k, *st))
	}, weir.Name("sum"))
	sumOut := &weir.Collect[string]{}
	weir.Sink(sums, sumOut, weir.Name("sums"))
	if then != nil {
		then(counts, sumOut)
	}
	return j, wins, sumOut
}

// liveInput is n records of 97 keys, 16 to an event-time millisecond, the
// counts per key and 50 ms window of liveJob, and its running counts.
func liveInput(n int) (in []rec, wantWins map[string]int64, wantSums map[string]int) {
	in = make([]rec, n)
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", i%97), TS: int64(i) / 16}
	}
	wantWins, wantSums = map[string]int64{}, map[string]int{}
	sum := map[string]int{}
	for _, r := range in {
		wantWins[fmt.Sprintf("%s@%d", r.Key, r.TS/50*50)]++
		sum[r.Key]++
		wantSums[fmt.Sprintf("%s=%d", r.Key, sum[r.Key])]++
	}
	return in, wantWins, wantSums
}

func TestRescaleLive(t *testing.T) {
	in, wantWins, wantSums := liveInput(12000)
	for _, strat := range []weir.RescaleStrategy{weir.Batched, weir.AllAtOnce, weir.Fluid} {
		for _, c := range []struct{ from, to int }{{4, 4}, {2, 4}, {4, 1}} {
			t.Run(fmt.Sprintf("%v/%d-%d", strat, c.from, c.to), func(t *testing.T) {
				j, wins, sums := liveJob(in, weir.ActiveInstances(c.from))
				done := make(chan error, 1)
				go func() { done <- j.Run(context.Background()) }()
				time.Sleep(400 * time.Millisecond)
				if c.to != c.from {
					m, err := j.Rescale(c.to, weir.WithStrategy(strat))
					if err != nil {
						t.Fatal(err)
					}
					if err := m.Wait(context.Background()); err != nil {
						t.Fatal(err)
					}
					b, kgs := j.MovedBytes()
					t.Logf("%d steps (epochs %d..%d), %d moves; moved %d bytes in %d key groups", m.Steps, m.First, m.Last, m.Moves, b, kgs)
				}
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				checkLiveOutputs(t, wins, sums, wantWins, wantSums)
			})
		}
	}
}

// keyGroupOwners is, from a job's figures, the instance each key group of
// the chains holding op is counted at, and the key groups no instance
// is counted at come out -1.
func keyGroupOwners(st weir.JobStats, op string, groups int) []int {
	owner := make([]int, groups)
	for i := range owner {
		owner[i] = -1
	}
	for _, in := range st.Instances() {
		if !slices.Contains(strings.Split(in.Operator, "→"), op) {
			continue
		}
		for k := range in.KeyGroups {
			owner[in.KeyGroupLo+k] = in.Instance
		}
	}
	return owner
}

// The per-instance key-group figures follow the owners: before a rescale
// from 2 to 4 instances only the first 2 instances own key groups, the
// contiguous halves; once it is done, each of the 4 owns its quarter.
func TestRescaleStatsFollowOwners(t *testing.T) {
	in := make([]rec, 12000)
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", i), TS: int64(i) / 16}
	}
	want := func(active int) []int {
		w := make([]int, 128)
		for kg := range w {
			w[kg] = kg * active / 128 // partition.Contiguous's ranges, 128 key groups being a multiple of 2 and 4
		}
		return w
	}
	j, _, _ := liveJob(in, weir.ActiveInstances(2))
	done := make(chan error, 1)
	go func() { done <- j.Run(context.Background()) }()
	time.Sleep(400 * time.Millisecond)
	if got := keyGroupOwners(j.Stats(), "sum", 128); !slices.Equal(got, want(2)) {
		t.Errorf("before the rescale, the key groups are counted at %v; want %v", got, want(2))
	}
	m, err := j.Rescale(4, weir.WithStrategy(weir.AllAtOnce))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := keyGroupOwners(j.Stats(), "sum", 128); !slices.Equal(got, want(4)) {
		t.Errorf("after the rescale, the key groups are counted at %v; want %v", got, want(4))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// checkLiveOutputs compares liveJob's outputs with the plain
// computation's: the count per key and window ("key@start"), and how
// often each of the other outputs comes out.
func checkLiveOutputs(t *testing.T, wins *weir.Collect[weir.WindowResult[string, int64]], out *weir.Collect[string], wantWins map[string]int64, want map[string]int) {
	t.Helper()
	sameCounts(t, "windows (key@start)", countsOf(wins.Records()), wantWins)
	gs := map[string]int{}
	for _, s := range out.Records() {
		gs[s]++
	}
	sameCounts(t, "outputs", gs, want)
}
