package weir_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// checkpointedCount is a windowed count over a paced source, so that a run
// can be stopped partway.
func checkpointedCount(j *weir.Job, in []rec, rate float64) *weir.Collect[weir.WindowResult[string, int64]] {
	s := weir.Source(j, "src", weir.Paced[rec](weir.SliceSource[rec]{Records: in, BatchSize: 100}, rate))
	timed := weir.EventTime(s, func(r rec) int64 { return r.TS }, 20*time.Millisecond, weir.Name("time"))
	counts := weir.Count(weir.Window(weir.KeyBy(timed, func(r rec) string { return r.Key }), weir.Tumbling(100*time.Millisecond),
		weir.WindowOptions(weir.Name("count"))))
	out := &weir.Collect[weir.WindowResult[string, int64]]{}
	weir.Sink(counts, out, weir.Name("out"))
	return out
}

// A job stopped partway and run again from its checkpoints gives exactly
// the result of an uninterrupted run: nothing lost, nothing counted twice.
func TestCheckpointRestart(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	in := make([]rec, 30000)
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", int(r.ExpFloat64()*10)), TS: int64(i) / 20}
	}
	want := map[[2]int64]int64{}
	keys := map[string]int64{}
	for _, x := range in {
		if _, ok := keys[x.Key]; !ok {
			keys[x.Key] = int64(len(keys))
		}
		want[[2]int64{keys[x.Key], x.TS / 100 * 100}]++
	}
	for _, strategy := range []string{"roundrobin", "hash"} {
		for _, workers := range []int{1, 3} {
			dir := t.TempDir()
			opts := []weir.JobOption{weir.Workers(workers), weir.EpochRecords(300), weir.Partitioning(strategy), weir.Checkpoints(dir, 2, 2)}
			// The first run stops partway, as a crash would.
			first := weir.NewJob("first", opts...)
			checkpointedCount(first, in, 60000)
			ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
			err := first.Run(ctx)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s workers %d: first run: %v; want it stopped partway", strategy, workers, err)
			}
			second := weir.NewJob("second", opts...)
			out := checkpointedCount(second, in, 1e9)
			if err := runErr(t, second); err != nil {
				t.Fatalf("%s workers %d: second run: %v", strategy, workers, err)
			}
			if second.Metrics().RestoredFrom == 0 {
				t.Fatalf("%s workers %d: the second run restored no checkpoint", strategy, workers)
			}
			got := map[[2]int64]int64{}
			for _, w := range out.Records() {
				got[[2]int64{keys[w.Key], w.Start}] += w.Value
			}
			if len(got) != len(want) {
				t.Errorf("%s workers %d: %d windows; want %d", strategy, workers, len(got), len(want))
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s workers %d: window %v counted %d; want %d", strategy, workers, k, got[k], v)
					break
				}
			}
		}
	}
}
