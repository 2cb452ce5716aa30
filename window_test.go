package weir_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

type event struct {
	Key string
	TS  int64
	Val int64
}

// genEvents makes n events over keys, with timestamps increasing by 0..3 ms
// per event, then displaced by up to disorder ms.
func genEvents(seed uint64, n, keys int, disorder int64) []event {
	r := rand.New(rand.NewPCG(seed, 1))
	ev := make([]event, n)
	ts := int64(1_000_000)
	for i := range ev {
		ts += int64(r.IntN(4))
		ev[i] = event{Key: fmt.Sprintf("k%d", r.IntN(keys)), TS: ts, Val: int64(r.IntN(100))}
	}
	// Bounded disorder: order by arrival = ts + a random delay of at most
	// disorder ms, so no record arrives more than disorder ms of event time
	// after one with a larger timestamp.
	if disorder > 0 {
		arrival := make(map[*event]int64, n)
		for i := range ev {
			arrival[&ev[i]] = ev[i].TS + r.Int64N(disorder+1)
		}
		ptrs := make([]*event, n)
		for i := range ev {
			ptrs[i] = &ev[i]
		}
		sort.SliceStable(ptrs, func(i, j int) bool { return arrival[ptrs[i]] < arrival[ptrs[j]] })
		out := make([]event, n)
		for i, p := range ptrs {
			out[i] = *p
		}
		ev = out
	}
	return ev
}

type wkey struct {
	Key        string
	Start, End int64
}

func TestWindowsAgainstModel(t *testing.T) {
	evs := genEvents(1, 20000, 37, 50)
	tests := []struct {
		name   string
		spec   weir.WindowSpec
		assign func(ts int64) [][2]int64
	}{
		{"tumbling", weir.Tumbling(100 * time.Millisecond), func(ts int64) [][2]int64 {
			s := ts - ts%100
			return [][2]int64{{s, s + 100}}
		}},
		{"sliding", weir.Sliding(100*time.Millisecond, 30*time.Millisecond), func(ts int64) [][2]int64 {
			var out [][2]int64
			for s := ts - ts%30; s > ts-100; s -= 30 {
				out = append(out, [2]int64{s, s + 100})
			}
			return out
		}},
		{"global", weir.Global(), func(ts int64) [][2]int64 {
			return [][2]int64{{-1 << 63, 1<<63 - 1}}
		}},
	}
	for _, tt := range tests {
		want := map[wkey]int64{}
		sums := map[wkey]int64{}
		for _, e := range evs {
			for _, w := range tt.assign(e.TS) {
				want[wkey{e.Key, w[0], w[1]}]++
				sums[wkey{e.Key, w[0], w[1]}] += e.Val
			}
		}
		for _, workers := range []int{1, 2, 4, 8} {
			job := weir.NewJob("t", weir.Workers(workers), weir.EpochRecords(500), weir.BatchSize(64))
			src := weir.EventTime(weir.Source(job, "src", weir.SliceSource[event]{Records: evs, BatchSize: 100}),
				func(e event) int64 { return e.TS }, 60*time.Millisecond)
			ws := weir.Window(weir.KeyBy(src, func(e event) string { return e.Key }), tt.spec)
			counts := weir.Count(ws)
			c := &weir.Collect[weir.WindowResult[string, int64]]{}
			weir.Sink(counts, c)
			if err := job.Run(context.Background()); err != nil {
				t.Fatalf("%s/%d: Run: %v", tt.name, workers, err)
			}
			got := map[wkey]int64{}
			for _, r := range c.Records() {
				k := wkey{r.Key, r.Start, r.End}
				if _, dup := got[k]; dup {
					t.Fatalf("%s/%d: window %v emitted twice", tt.name, workers, k)
				}
				got[k] = r.Value
			}
			if !reflect.DeepEqual(got, want) {
				for _, k := range sortedKeys(want) {
					if got[k] != want[k] {
						t.Logf("%v: got %d want %d", k, got[k], want[k])
						break
					}
				}
				t.Errorf("%s/%d workers: %d windows; want %d (late %d)", tt.name, workers, len(got), len(want), job.Metrics().Late)
			}
		}
	}
}

func sortedKeys[V any](m map[wkey]V) []wkey {
	var ks []wkey
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return fmt.Sprint(ks[i]) < fmt.Sprint(ks[j]) })
	return ks
}
