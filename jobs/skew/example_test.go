package skew_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/jobs/skew"
)

// The job under Prompt's partitioning gives the reference's counts.
func Example() {
	recs, err := skew.Generate(skew.Config{S: 1.5, Keys: 1_000, Events: 30_000, Seed: 1, EventsPerSecond: 10_000})
	if err != nil {
		panic(err)
	}
	job := weir.NewJob("skew", weir.Workers(2), weir.Partitioning("prompt"))
	col := &skew.Collector{}
	weir.Sink(skew.Query(weir.Source(job, "records", weir.SliceSource[skew.Record]{Records: recs}), 0), col)
	if err := job.Run(context.Background()); err != nil {
		panic(err)
	}
	want := skew.Reference(recs)
	fmt.Println(len(want), "counts; equal:", slices.Equal(col.Sorted(), want))
	fmt.Println(job.PartitionStats()[0].Strategy)
	// Output:
	// 1440 counts; equal: true
	// prompt
}

// Simulate compares the strategies' planners on the same epochs.
func ExampleSimulate() {
	rs, err := skew.Simulate(skew.SimConfig{Partitions: 16, Epochs: 2, EpochRecords: 100_000, S: 1.5, Keys: 100_000, Seed: 1})
	if err != nil {
		panic(err)
	}
	for _, r := range rs {
		if r.Strategy == "hash" || r.Strategy == "prompt" {
			fmt.Printf("%-6s largest reducer %.1fx the mean; over 4x hash's throughput: %v\n", r.Strategy, r.ReduceImbalance, r.RatioToHash > 4)
		}
	}
	// Output:
	// hash   largest reducer 6.3x the mean; over 4x hash's throughput: false
	// prompt largest reducer 1.0x the mean; over 4x hash's throughput: true
}
