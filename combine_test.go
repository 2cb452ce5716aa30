package weir_test

import (
	"context"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// TestCombinerSwitchesOffAndOn runs a count over a stream whose first part
// has a new key per record (pre-aggregation does not pay, so the exchange
// falls back to raw records) and whose second part has few keys (it pays
// again), and checks every window against a plain count.
func TestCombinerSwitchesOffAndOn(t *testing.T) {
	type rec struct {
		K  int
		TS int64
	}
	var in []rec
	for i := 0; i < 20000; i++ {
		in = append(in, rec{K: i, TS: int64(i)})
	}
	for i := 20000; i < 60000; i++ {
		in = append(in, rec{K: i % 7, TS: int64(i)})
	}
	want := map[[2]int64]int64{}
	for _, r := range in {
		want[[2]int64{int64(r.K), r.TS - r.TS%1000}]++
	}
	for _, workers := range []int{1, 2, 4} {
		job := weir.NewJob("combine", weir.Workers(workers), weir.EpochRecords(500), weir.BatchSize(64))
		src := weir.EventTime(weir.Source(job, "src", weir.SliceSource[rec]{Records: in, BatchSize: 100}),
			func(r rec) int64 { return r.TS }, time.Millisecond)
		counts := weir.Count(weir.Window(weir.KeyBy(src, func(r rec) int { return r.K }), weir.Tumbling(time.Second)))
		c := &weir.Collect[weir.WindowResult[int, int64]]{}
		weir.Sink(counts, c)
		if err := job.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := map[[2]int64]int64{}
		for _, r := range c.Records() {
			got[[2]int64{int64(r.Key), r.Start}] += r.Value
		}
		if len(got) != len(want) {
			t.Fatalf("%d workers: %d windows; want %d", workers, len(got), len(want))
		}
		for k, n := range want {
			if got[k] != n {
				t.Fatalf("%d workers: window %v counted %d; want %d", workers, k, got[k], n)
			}
		}
		if late := job.Metrics().Late; late != 0 {
			t.Errorf("%d workers: %d late records; want 0", workers, late)
		}
	}
}
