package weir_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// Idleness is not saved: a restored instance that had been idle counts
// again until IdleAfter passes. The windows keep their watermark, and
// pass it on, so the watermark after the restore is never behind the one
// before, a record behind it is late as it would have been, and the
// results are those of a run never stopped.
func TestIdleAfterRestore(t *testing.T) {
	back := []irec{{"b", 500, true}, {"b", 9500, true}, {"b", 12000, true}}
	want := idleModel(append(steady(), back...), back[:1])
	for _, count := range []bool{false, true} {
		opts := []weir.JobOption{weir.Workers(2), weir.BatchInterval(5 * time.Millisecond), weir.Checkpoints(t.TempDir(), 2, 3)}
		if count {
			opts = append(opts, weir.EpochRecords(40))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()

		// The first run stops once split 1, which has read nothing, is left
		// out and the watermark is split 0's.
		in := newScript(2, count, [][]irec{steady(), nil}, [][]irec{nil, back})
		stop := make(chan struct{})
		var high atomic.Int64
		high.Store(math.MinInt64)
		first := weir.NewJob("first", append(slices.Clone(opts), weir.StopOn(stop), weir.OnEpoch(func(st weir.EpochStats) {
			if st.Watermark >= 9989 && high.Swap(st.Watermark) < 9989 {
				close(stop)
			}
		}))...)
		idleCount(in, true, false)(first)
		if err := first.Run(ctx); !errors.Is(err, weir.ErrStopped) {
			t.Fatalf("count %v: first run: %v; want ErrStopped", count, err)
		}

		// The second run resumes with both instances active; split 1 then
		// reads records, one behind the watermark.
		in = newScript(2, count, [][]irec{steady(), nil}, [][]irec{nil, back})
		var low atomic.Int64
		var epochs atomic.Int64
		low.Store(math.MaxInt64)
		second := weir.NewJob("second", append(slices.Clone(opts), weir.OnEpoch(func(st weir.EpochStats) {
			epochs.Add(1)
			low.Store(min(low.Load(), st.Watermark))
		}))...)
		out := idleCount(in, true, false)(second)
		go func() {
			for epochs.Load() < 20 {
				time.Sleep(time.Millisecond)
			}
			in.open(0)
			for in.live.Load() < int64(len(back)) {
				time.Sleep(time.Millisecond)
			}
			in.open(1)
		}()
		if err := second.Run(ctx); err != nil {
			t.Fatalf("count %v: second run: %v", count, err)
		}
		if second.Metrics().RestoredFrom == 0 {
			t.Errorf("count %v: the second run restored nothing", count)
		}
		if l := low.Load(); l < high.Load() {
			t.Errorf("count %v: the watermark went back from %d to %d after the restore", count, high.Load(), l)
		}
		if got := sortedWindows(out.Records()); !slices.Equal(got, want) {
			t.Errorf("count %v: %d results; want %d:\n%v\nwant\n%v", count, len(got), len(want), got, want)
		}
	}
}

// IdleAfter must be positive, and is an option of EventTime only.
func TestIdleAfterRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(s weir.Stream[irec])
		want  string
	}{
		{"zero", func(s weir.Stream[irec]) { weir.EventTime(s, func(r irec) int64 { return r.TS }, 0, weir.IdleAfter(0)) },
			"weir: EventTime: IdleAfter(0s): must be positive"},
		{"negative", func(s weir.Stream[irec]) {
			weir.EventTime(s, func(r irec) int64 { return r.TS }, 0, weir.IdleAfter(-time.Second))
		}, "weir: EventTime: IdleAfter(-1s): must be positive"},
		{"map", func(s weir.Stream[irec]) {
			weir.Map(s, func(r irec) irec { return r }, weir.Stateless(), weir.Name("m"), weir.IdleAfter(time.Second))
		}, "weir: m: IdleAfter(1s) is an option of EventTime only"},
		{"keyby", func(s weir.Stream[irec]) {
			weir.KeyBy(s, func(r irec) string { return r.Key }, weir.IdleAfter(time.Second))
		},
			"weir: KeyBy: IdleAfter(1s) is an option of EventTime only"},
		{"window", func(s weir.Stream[irec]) {
			timed := weir.EventTime(s, func(r irec) int64 { return r.TS }, 0)
			weir.Count(weir.Window(weir.KeyBy(timed, func(r irec) string { return r.Key }), weir.Tumbling(time.Second),
				weir.WindowOptions(weir.Name("w"), weir.IdleAfter(time.Second))))
		}, "weir: w: IdleAfter(1s) is an option of EventTime only"},
		{"sink", func(s weir.Stream[irec]) {
			weir.Sink(s, &weir.Collect[irec]{}, weir.Name("out"), weir.IdleAfter(time.Second))
		},
			"weir: out: IdleAfter(1s) is an option of EventTime only"},
	} {
		j := weir.NewJob("refused")
		tc.build(weir.Source(j, "src", weir.SliceSource[irec]{}))
		if err := j.Run(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Run = %v; want an error saying %q", tc.name, err, tc.want)
		}
	}
}
