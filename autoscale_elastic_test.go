package weir_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/transport"
)

// An elastic job of three slots (two workers each) started on two
// members sizes itself. Its keyed step first takes 1 ms a record, read at
// 4000 records a second: it needs five to seven instances, more than the
// four the members run, so it grows to four and says at least three
// processes are needed. Once the third joins (the join spreads the key
// groups over its instances too) the sizing takes the six instances as
// they are, and decides from there within the three processes (the
// joiner's decider agrees with the others' from its first round). Then
// the step costs nothing: it scales down to one instance, says one
// process would do once that has taken force, and the two highest leave
// the job. The processes list the same decisions, no round's digests
// differ, and the counts are the plain count's.
func TestAutoscaleElastic(t *testing.T) {
	in := wordsInput(140000)
	pol := weir.DefaultAutoscalePolicy
	pol.Every, pol.DownWindow = 10, 3
	var light atomic.Bool
	r := &elasticRun{slots: transport.NewLocalSlots(3), jobs: make([]*weir.Job, 3), errs: make([]error, 3)}
	outs := make([]*weir.Collect[wordCount], 3)
	build := func(p int) func(j *weir.Job) {
		return func(j *weir.Job) {
			outs[p] = sleepyCount(j, in, 4000, func() bool { return !light.Load() })
			j.AdmitJoins(weir.WithStrategy(weir.AllAtOnce))
		}
	}
	opts := []weir.JobOption{weir.Workers(2), weir.ActiveInstances(1), weir.BatchInterval(100 * time.Millisecond), weir.BatchSize(16),
		weir.ElasticCluster(2), weir.Autoscale(pol, weir.WithStrategy(weir.AllAtOnce))}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for p := range 2 {
		r.start(ctx, t, p, build(p), opts...)
	}
	needs := func(what string, ok func(need, running int) bool) {
		t.Helper()
		for {
			if need, running := r.jobs[0].ProcessesNeeded(); ok(need, running) {
				t.Logf("%s: %d processes needed, %d running (%d records read)", what, need, running, r.jobs[0].Metrics().Records)
				return
			}
			if ctx.Err() != nil || r.jobs[0].Metrics().Records == int64(len(in)) {
				ds, _ := r.jobs[0].ScaleDecisions()
				t.Fatalf("%s: never said so; decisions %+v; processes ended with %v", what, ds, r.errs)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	needs("more processes", func(need, running int) bool { return need >= 3 && running == 2 })
	if w := r.jobs[0].WantedInstances(); w <= 4 {
		t.Errorf("%d instances wanted; want more than the 4 the members run", w)
	}
	r.start(ctx, t, 2, build(2), append(opts, weir.JoinCluster())...)
	needs("the third takes part", func(need, running int) bool { return running == 3 })
	light.Store(true)
	needs("fewer processes", func(need, running int) bool { return need == 1 && running == 3 })
	r.leaveSlot(t, 0, 2)
	r.leaveSlot(t, 1, 1)
	r.wait(t)
	var decided [3][]weir.ScaleDecision
	for p, j := range r.jobs {
		ds, err := j.ScaleDecisions()
		if err != nil {
			t.Errorf("process %d: the autoscaler stopped: %v", p, err)
		}
		decided[p] = ds
		t.Logf("process %d: decisions %+v", p, ds)
		if n := j.ScaleDisagreements(); n != 0 {
			t.Errorf("process %d: %d rounds whose digests differed", p, n)
		}
	}
	ds := decided[0]
	if len(ds) < 2 || ds[0].From != 1 || ds[0].To > 4 || ds[len(ds)-1].To > 2 {
		t.Fatalf("decisions %+v; want the first from 1 to at most the members' 4, the last to at most 2", ds)
	}
	if last := ds[len(ds)-1]; last.InForce <= last.Epoch {
		t.Errorf("the last decision %+v never took force", last)
	}
	for _, d := range ds {
		if d.To > 6 {
			t.Errorf("decision %+v: more than the three processes' 6 instances", d)
		}
	}
	// Process 1 took part in every round process 0 sized until it left;
	// process 2 from its join.
	same := func(a, b weir.ScaleDecision) bool { return a.Epoch == b.Epoch && a.From == b.From && a.To == b.To }
	for p := 1; p < 3; p++ {
		for _, d := range decided[p] {
			if !slices.ContainsFunc(ds, func(o weir.ScaleDecision) bool { return same(o, d) }) {
				t.Errorf("process %d decided %+v, which process 0 did not", p, d)
			}
		}
	}
	var all []wordCount
	for _, o := range outs {
		all = append(all, o.Records()...)
	}
	if len(all) != len(in) {
		t.Errorf("%d counts for %d records", len(all), len(in))
	}
	checkWordCounts(t, in, all)
}
