package weir_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/transport"
)

// A job of two processes of two workers each sizes its keyed count by
// itself, with no master: the count (1 ms a record, so at 6000 records a
// second it needs about eight instances at 80 %) starts on one instance
// of four and grows to all four; both processes list the same decisions,
// their digests never differ, both say with the first decision that more
// instances are wanted than the processes run, and the counts both sinks wrote together are the
// plain count's; more processes are needed than run.
func TestAutoscaleProcesses(t *testing.T) {
	in := wordsInput(36000)
	pol := weir.DefaultAutoscalePolicy
	pol.Every = 10
	nets := transport.NewLocal(2)
	jobs := make([]*weir.Job, 2)
	outs := make([]*weir.Collect[wordCount], 2)
	for i := range jobs {
		j := weir.NewJob("autoscale-procs", weir.Workers(2), weir.ActiveInstances(1), weir.BatchInterval(100*time.Millisecond), weir.BatchSize(16),
			weir.WithNetwork(nets[i]), weir.Autoscale(pol, weir.WithStrategy(weir.AllAtOnce)))
		outs[i] = sleepyCount(j, in, 6000, func() bool { return true })
		jobs[i] = j
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	errs, done := runAll(ctx, jobs)
	// The most processes the sizing said it needs, while it ran.
	most := make([]int, len(jobs))
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-time.After(20 * time.Millisecond):
		}
		for i, j := range jobs {
			if need, procs := j.ProcessesNeeded(); procs == 2 {
				most[i] = max(most[i], need)
			}
		}
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	var decided [2][]weir.ScaleDecision
	for i, j := range jobs {
		ds, err := j.ScaleDecisions()
		if err != nil {
			t.Errorf("process %d: the autoscaler stopped: %v", i, err)
		}
		decided[i] = ds
		if n := j.ScaleDisagreements(); n != 0 {
			t.Errorf("process %d: %d rounds whose digests differed", i, n)
		}
		if a := j.Stats().Autoscale; a == nil || a.Decisions != len(ds) || a.Differed != 0 {
			t.Errorf("process %d: the figures' autoscaler %+v; want %d decisions, none differed", i, a, len(ds))
		}
		if len(ds) > 0 && ds[0].Wanted <= 4 {
			t.Errorf("process %d: the first decision wanted %d instances; want more than the 4 the processes run", i, ds[0].Wanted)
		}
	}
	t.Logf("decisions %+v", decided[0])
	if !slices.EqualFunc(decided[0], decided[1], func(a, b weir.ScaleDecision) bool {
		return a.Epoch == b.Epoch && a.From == b.From && a.To == b.To && a.Wanted == b.Wanted
	}) {
		t.Errorf("the processes decided apart: %+v and %+v", decided[0], decided[1])
	}
	if len(decided[0]) == 0 || decided[0][0].From != 1 || decided[0][len(decided[0])-1].To != 4 || len(decided[0]) > 3 {
		t.Errorf("decisions %+v; want one to three, from 1, ending at 4", decided[0])
	}
	for i := range decided {
		if n := len(decided[i]); n > 0 && decided[i][n-1].InForce <= decided[i][n-1].Epoch {
			t.Errorf("process %d: the last decision %+v never took force", i, decided[i][n-1])
		}
	}
	// The sizing needed more instances than both processes run: more
	// processes.
	for i, n := range most {
		if n <= 2 {
			t.Errorf("process %d: at most %d processes needed, with 2 running; want more", i, n)
		}
	}
	all := append(outs[0].Records(), outs[1].Records()...)
	if len(all) != len(in) {
		t.Errorf("%d counts for %d records", len(all), len(in))
	}
	checkWordCounts(t, in, all)
}

// sleepyCount is a word count over in, read at rate records a second by
// one source instance (on process 0), whose keyed step sleeps 1 ms a
// record while heavy says so.
func sleepyCount(j *weir.Job, in []string, rate float64, heavy func() bool) *weir.Collect[wordCount] {
	s := weir.Source(j, "words", weir.Paced[string](weir.SliceSource[string]{Records: in, BatchSize: 16}, rate), weir.Parallelism(1))
	c := weir.Process(weir.KeyBy(s, func(w string) string { return w }), func(k string, st *int, _ string, out []wordCount) []wordCount {
		if heavy() {
			time.Sleep(time.Millisecond)
		}
		*st++
		return append(out, wordCount{k, *st})
	}, weir.Name("count"))
	out := &weir.Collect[wordCount]{}
	weir.Sink(c, out, weir.Name("out"))
	return out
}
