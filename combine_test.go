package weir_test

import (
	"context"
	"fmt"
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

// TestCombinerStringKeys feeds string keys that are equal in content but
// stored at different addresses (substrings of different buffers), keys
// that share their bytes (from a lookup table), and more keys than the
// combiner's address cache has slots, and checks the counts.
func TestCombinerStringKeys(t *testing.T) {
	type rec struct {
		K  string
		TS int64
	}
	table := make([]string, 1000)
	for i := range table {
		table[i] = fmt.Sprintf("key-%04d", i)
	}
	var in []rec
	for i := 0; i < 50000; i++ {
		k := table[(i*7919)%len(table)]
		if i%3 == 0 {
			// The same content at a new address: a substring of a fresh buffer.
			buf := "xx" + k + "yy"
			k = buf[2 : 2+len(k)]
		}
		in = append(in, rec{K: k, TS: int64(i / 10)})
	}
	want := map[[2]string]int64{}
	for _, r := range in {
		want[[2]string{r.K, fmt.Sprint(r.TS - r.TS%1000)}]++
	}
	for _, workers := range []int{1, 3} {
		job := weir.NewJob("strkeys", weir.Workers(workers), weir.EpochRecords(2000))
		src := weir.EventTime(weir.Source(job, "src", weir.SliceSource[rec]{Records: in}),
			func(r rec) int64 { return r.TS }, time.Millisecond)
		out := &weir.Collect[weir.WindowResult[string, int64]]{}
		weir.Sink(weir.Count(weir.Window(weir.KeyBy(src, func(r rec) string { return r.K }), weir.Tumbling(time.Second))), out)
		if err := job.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := map[[2]string]int64{}
		for _, r := range out.Records() {
			got[[2]string{r.Key, fmt.Sprint(r.Start)}] += r.Value
		}
		if len(got) != len(want) {
			t.Fatalf("%d workers: %d windows; want %d", workers, len(got), len(want))
		}
		for k, n := range want {
			if got[k] != n {
				t.Fatalf("%d workers: window %v counted %d; want %d", workers, k, got[k], n)
			}
		}
	}
}
