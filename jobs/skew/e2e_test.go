package skew_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/jobs/skew"
)

var strategies = []string{"hash", "roundrobin", "pkg", "prompt"}

// run runs the query over in with opts and returns its sorted output and
// the job.
func run(t *testing.T, in weir.Input[skew.Record], opts ...weir.JobOption) ([]skew.Result, *weir.Job) {
	t.Helper()
	job := weir.NewJob("skew", opts...)
	col := &skew.Collector{}
	weir.Sink(skew.Query(weir.Source(job, "records", in), 0), col, weir.Name("collect"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := job.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return col.Sorted(), job
}

// compare reports the first difference between got and want.
func compare(t *testing.T, got, want []skew.Result) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("%d results, want %d; first difference at %d: got %+v, want %+v", len(got), len(want), i, got[i], want[i])
		}
	}
	t.Fatalf("%d results, want %d", len(got), len(want))
}

// checkStats checks the partitioning figures of the job's one keyed
// aggregation.
func checkStats(t *testing.T, job *weir.Job, strategy string, workers int) {
	t.Helper()
	st := job.PartitionStats()
	if len(st) != 1 {
		t.Fatalf("PartitionStats() has %d entries, want 1 (one keyed aggregation)", len(st))
	}
	s := st[0]
	if s.Strategy != strategy || s.Partitions != workers {
		t.Errorf("PartitionStats()[0] = %+v; want strategy %s over %d partitions", s, strategy, workers)
	}
	if s.Epochs < 1 || s.MapImbalance < 1 || s.ReduceImbalance < 1 || s.SplitKeys < 0 || s.Fragments < s.SplitKeys {
		t.Errorf("PartitionStats()[0] = %+v; figures out of range", s)
	}
	if workers == 1 && (s.SplitKeys != 0 || s.MapImbalance != 1 || s.ReduceImbalance != 1) {
		t.Errorf("PartitionStats()[0] = %+v; one partition cannot split keys or be imbalanced", s)
	}
}

func TestQueryMatchesReference(t *testing.T) {
	n := 150_000
	if testing.Short() {
		n = 40_000
	}
	inputs := []skew.Config{
		{Dist: "zipf", S: 1.5, Keys: 5_000, Events: n, Seed: 1, EventsPerSecond: 25_000},
		{Dist: "zipf", S: 0.8, Keys: 20_000, Events: n, Seed: 2, EventsPerSecond: 40_000},
		{Dist: "uniform", Keys: 3_000, Events: n, Seed: 3, EventsPerSecond: 30_000},
	}
	for _, cfg := range inputs {
		recs, err := skew.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		want := skew.Reference(recs)
		if len(want) < 1_000 {
			t.Fatalf("%+v: only %d results", cfg, len(want))
		}
		for _, s := range strategies {
			for _, w := range []int{1, 2, 4} {
				name := fmt.Sprintf("%s-s%v/%s/workers=%d", cfg.Dist, cfg.S, s, w)
				t.Run(name, func(t *testing.T) {
					in := weir.SliceSource[skew.Record]{Records: recs, BatchSize: 512}
					got, job := run(t, in, weir.Workers(w), weir.EpochRecords(2_000), weir.BatchSize(256), weir.Partitioning(s))
					compare(t, got, want)
					checkStats(t, job, s, w)
				})
			}
		}
	}
}

// TestGeneratorSource runs the query on the generator itself, split into
// parallel instances that interleave the sequence, with time-based epochs.
func TestGeneratorSource(t *testing.T) {
	cfg := skew.Config{S: 1.2, Keys: 2_000, Events: 60_000, Seed: 9, EventsPerSecond: 10_000}
	recs, err := skew.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := skew.Reference(recs)
	for _, s := range strategies {
		t.Run(s, func(t *testing.T) {
			got, _ := run(t, cfg.Zipf(), weir.Workers(3), weir.BatchInterval(2*time.Millisecond), weir.Partitioning(s))
			compare(t, got, want)
		})
	}
}

func TestUnknownPartitioningFails(t *testing.T) {
	job := weir.NewJob("skew", weir.Partitioning("sideways"))
	recs, _ := skew.Generate(skew.Config{Events: 100})
	weir.Sink(skew.Query(weir.Source(job, "records", weir.SliceSource[skew.Record]{Records: recs}), 0), &skew.Collector{})
	if err := job.Run(context.Background()); err == nil {
		t.Error("Run with Partitioning(\"sideways\") succeeded; want an error")
	}
}
