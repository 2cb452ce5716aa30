package weir_test

import (
	"context"
	"fmt"
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

// hotInput is n records of three keys, 16 a millisecond of event time,
// and the count of each key's 50 ms windows.
func hotInput(n int) (in []rec, want map[string]int64) {
	in, want = make([]rec, n), map[string]int64{}
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", i%3), TS: int64(i) / 16}
		want[fmt.Sprintf("%s@%d", in[i].Key, in[i].TS/50*50)]++
	}
	return in, want
}

// Prompt's task count follows the load within the instances the routing
// gives key groups to: overloaded on two instances of four, its rounds
// never take more than two tasks. (The rounds carry the hot keys: three
// keys are all hot.)
func TestPromptTasksWithinInstances(t *testing.T) {
	in, want := hotInput(3000)
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

// Under prompt every record counts once as the source's output and once
// as the window's input, whether it was deposited for a round (a hot key)
// or sent raw to its owner (a cold key): DS2 reads rates from these.
func TestPromptRecordsCountedOnce(t *testing.T) {
	in := make([]rec, 40000)
	for i := range in {
		k := fmt.Sprintf("k%d", i%5000)
		if i%2 == 0 {
			k = "hot"
		}
		in[i] = rec{ID: i, Key: k, TS: int64(i) / 16}
	}
	j := weir.NewJob("once", weir.Workers(2), weir.EpochRecords(2000), weir.Partitioning("prompt"))
	s := weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 100})
	weir.Sink(weir.Count(weir.Window(weir.KeyBy(s, func(r rec) string { return r.Key }), weir.Global(),
		weir.WindowOptions(weir.Name("count")))), &weir.Collect[weir.WindowResult[string, int64]]{})
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var out int64
	for _, s := range j.Stats().Instances() {
		if s.Operator == "src" {
			out += s.RecordsOut
		}
	}
	if out != int64(len(in)) {
		t.Errorf("the source's instances sent %d records; want %d", out, len(in))
	}
	if took := windowTook(j); took != int64(len(in)) {
		t.Errorf("the window's instances took in %d records; want %d", took, len(in))
	}
	if ps := j.PartitionStats(); len(ps) != 1 || ps[0].SplitKeys == 0 {
		t.Errorf("partition figures %+v; want the hot key split", ps)
	}
}
