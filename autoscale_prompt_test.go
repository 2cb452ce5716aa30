package weir_test

import (
	"context"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// slowCount is a count per key and 50 ms window of in, read at rate
// records a second, whose every record takes service (a sleep) to fold.
func slowCount(j *weir.Job, in []rec, rate float64, service time.Duration) *weir.Collect[weir.WindowResult[string, int64]] {
	s := weir.Source(j, "src", weir.Paced[rec](weir.SliceSource[rec]{Records: in, BatchSize: 16}, rate))
	timed := weir.EventTime(s, func(r rec) int64 { return r.TS }, 10*time.Millisecond, weir.Name("time"))
	counts := weir.Aggregate(weir.Window(weir.KeyBy(timed, func(r rec) string { return r.Key }), weir.Tumbling(50*time.Millisecond),
		weir.WindowOptions(weir.Name("count"))), weir.Aggregator[rec, int64, int64]{
		Init:  func() int64 { return 0 },
		Add:   func(a int64, _ rec) int64 { time.Sleep(service); return a + 1 },
		Merge: func(a, b int64) int64 { return a + b },
	})
	out := &weir.Collect[weir.WindowResult[string, int64]]{}
	weir.Sink(counts, out, weir.Name("wins"))
	return out
}

// windowTook sums the records the instances of the window "count" took in.
func windowTook(j *weir.Job) int64 {
	took := int64(0)
	for _, s := range j.Stats().Instances() {
		if s.Operator == "count" {
			took += s.RecordsIn
		}
	}
	return took
}

// Prompt's task count follows the load within the instances the routing
// gives key groups to: overloaded on two instances of four, its rounds
// never take more than two tasks.
func TestPromptTasksWithinInstances(t *testing.T) {
	in, want, _ := liveInput(3000)
	j := weir.NewJob("tasks", weir.Workers(4), weir.ActiveInstances(2), weir.BatchInterval(20*time.Millisecond), weir.Partitioning("prompt"))
	out := slowCount(j, in, 6000, 300*time.Microsecond)
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	sameCounts(t, "windows", countsOf(out.Records()), want)
	ps := j.PartitionStats()
	if len(ps) != 1 || ps[0].MapTasks != 2 {
		t.Errorf("partition figures %+v; want the rounds overloaded on the 2 instances", ps)
	}
	if got := windowTook(j); got != int64(len(in)) {
		t.Errorf("the window's instances took in %d records; want %d", got, len(in))
	}
}

// A job whose window aggregation runs Prompt's rounds sizes it by itself
// as a hash-partitioned job does: the rounds count the records they fold
// as the window instances' input, so DS2 sees the aggregation's true
// rate (at most 3300 records a second an instance, about 900 here), and
// the rounds' task count follows the load within the instances DS2
// gives it. Each window's count is the plain count, once.
func TestAutoscalePrompt(t *testing.T) {
	in, want, _ := liveInput(16800) // 12 s
	pol := weir.DefaultAutoscalePolicy
	pol.Every = 3 // an overloaded round holds its senders back: epochs grow long
	j := weir.NewJob("autoscale", weir.Workers(4), weir.ActiveInstances(1), weir.BatchInterval(50*time.Millisecond),
		weir.Partitioning("prompt"), weir.Autoscale(pol, weir.WithStrategy(weir.AllAtOnce)))
	out := slowCount(j, in, 1400, 300*time.Microsecond)
	ds := runSizingUp(t, j)
	t.Logf("decisions %+v; partition figures %+v", ds, j.PartitionStats())
	last := ds[len(ds)-1]
	if ps := j.PartitionStats(); len(ps) != 1 || ps[0].MapTasks > last.To {
		t.Errorf("partition figures %+v; want the last round's tasks within the %d instances", ps, last.To)
	}
	got := out.Records()
	sameCounts(t, "windows", countsOf(got), want)
	if len(got) != len(want) {
		t.Errorf("%d window results for %d windows", len(got), len(want))
	}
	if took := windowTook(j); took != int64(len(in)) {
		t.Errorf("the window's instances took in %d records; want %d", took, len(in))
	}
}
