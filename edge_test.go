package weir_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

func floorMod(a, b int64) int64 { return ((a % b) + b) % b }

func TestNegativeTimestamps(t *testing.T) {
	in := genRecs(51, 2000, 7, maxDelay)
	for i := range in {
		in[i].TS -= 1_001_500 // from about -1500 to +1500 ms
	}
	specs := []winModel{
		{"tumbling", func() weir.WindowSpec { return weir.Tumbling(100 * time.Millisecond) }, nil,
			fixedWindows(func(ts int64) [][2]int64 {
				s := ts - floorMod(ts, 100)
				return [][2]int64{{s, s + 100}}
			})},
		{"sliding", func() weir.WindowSpec { return weir.Sliding(100*time.Millisecond, 30*time.Millisecond) }, nil,
			fixedWindows(func(ts int64) [][2]int64 {
				var out [][2]int64
				for s := ts - floorMod(ts, 30); s > ts-100; s -= 30 {
					out = append(out, [2]int64{s, s + 100})
				}
				return out
			})},
		{"session", func() weir.WindowSpec { return weir.Session(20 * time.Millisecond) }, nil, sessions(20)},
	}
	for _, sp := range specs {
		for _, c := range runCfgs()[:4] {
			t.Run(sp.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				j := c.job()
				out := &bag[weir.WindowResult[string, int64]]{}
				weir.Sink(weir.Count(weir.Window(weir.KeyBy(timedSource(c, j, "src", in), recKey), sp.spec())), out)
				run(t, j)
				checkBag(t, out.out, results(sp.assign(in), func(rs []rec) int64 { return int64(len(rs)) }))
			})
		}
	}
}

// TestWindowOfWindows feeds window results, stamped with their window's
// last millisecond, into a second event-time window: none may be late.
func TestWindowOfWindows(t *testing.T) {
	in := genRecs(52, 5000, 19, maxDelay)
	want := map[winKey]int64{}
	for _, r := range in {
		s := r.TS - r.TS%100
		want[winKey{"all", s, s + 100}]++
	}
	for _, c := range runCfgs() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			j := c.job()
			perKey := countTumbling(timedSource(c, j, "src", in))
			total := weir.Reduce(weir.Window(weir.KeyBy(perKey, func(weir.WindowResult[string, int64]) string { return "all" }),
				weir.Tumbling(100*time.Millisecond)),
				func(a, b weir.WindowResult[string, int64]) weir.WindowResult[string, int64] {
					a.Value += b.Value
					return a
				})
			out := &bag[weir.WindowResult[string, weir.WindowResult[string, int64]]]{}
			weir.Sink(total, out)
			run(t, j)
			got := map[winKey]int64{}
			for _, r := range out.out {
				got[winKey{r.Key, r.Start, r.End}] += r.Value.Value
			}
			if !mapsEqual(got, want) {
				t.Errorf("got %d windows, want %d", len(got), len(want))
			}
		})
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestSessionLateMerge(t *testing.T) {
	// Sessions with a 10 ms gap, 20 ms allowed lateness, no out-of-orderness;
	// every record is an epoch of its own (see stepJob).
	in := []rec{
		{ID: 1, Key: "a", TS: 0},   // [0,10)
		{ID: 2, Key: "a", TS: 15},  // wm 14: [0,10) fires with 1
		{ID: 3, Key: "a", TS: 8},   // joins [0,10) and [15,25): [0,25) with 3
		{ID: 4, Key: "a", TS: 40},  // wm 39: [0,25) fires with 3
		{ID: 5, Key: "a", TS: 30},  // [30,40), on time for its cleanup: fires with 1
		{ID: 6, Key: "a", TS: 5},   // within lateness of [0,25): fires again with 4
		{ID: 7, Key: "a", TS: 100}, // wm 99: [40,50) fires with 1, the rest is dropped
		{ID: 8, Key: "a", TS: 1},   // [1,11) is past cleanup and overlaps nothing: late
	}
	j := stepJob()
	ws := weir.Window(weir.KeyBy(stepSource(j, in, 0), recKey), weir.Session(10*time.Millisecond),
		weir.AllowedLateness(20*time.Millisecond))
	out := &bag[weir.WindowResult[string, int64]]{}
	late := &bag[rec]{}
	weir.Sink(weir.Count(ws), out)
	weir.Sink(ws.Late(), late)
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []weir.WindowResult[string, int64]{
		{Key: "a", Start: 0, End: 10, Value: 1},
		{Key: "a", Start: 0, End: 25, Value: 3},
		{Key: "a", Start: 30, End: 40, Value: 1},
		{Key: "a", Start: 0, End: 25, Value: 4},
		{Key: "a", Start: 40, End: 50, Value: 1},
		{Key: "a", Start: 100, End: 110, Value: 1},
	}
	if !slices.Equal(out.out, want) {
		t.Errorf("results:\n got %v\nwant %v", out.out, want)
	}
	if !slices.Equal(late.out, in[7:]) || j.Metrics().Late != 1 {
		t.Errorf("late output %v (counted %d), want %v", late.out, j.Metrics().Late, in[7:])
	}
}

func TestOutOfOrderBoundary(t *testing.T) {
	// With 10 ms out-of-orderness, a record exactly 10 ms behind the largest
	// time seen is on time; 11 ms behind, its window may be gone.
	in := []rec{{ID: 1, Key: "a", TS: 100}, {ID: 2, Key: "a", TS: 210}, {ID: 3, Key: "a", TS: 200}, {ID: 4, Key: "a", TS: 199}}
	j := stepJob()
	ws := weir.Window(weir.KeyBy(stepSource(j, in, 10*time.Millisecond), recKey), weir.Tumbling(100*time.Millisecond))
	out := &bag[weir.WindowResult[string, int64]]{}
	late := &bag[rec]{}
	weir.Sink(weir.Count(ws), out)
	weir.Sink(ws.Late(), late)
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []weir.WindowResult[string, int64]{{Key: "a", Start: 100, End: 200, Value: 1}, {Key: "a", Start: 200, End: 300, Value: 2}}
	if !slices.Equal(out.out, want) || !slices.Equal(late.out, in[3:]) {
		t.Errorf("results %v, late %v; want %v and %v", out.out, late.out, want, in[3:])
	}
}

func TestJoinLateCounted(t *testing.T) {
	// Two sources of one record per epoch: the join's watermark after epoch
	// e is min(left, right) of the largest times so far, minus 1.
	left := []rec{{ID: 1, Key: "a", TS: 10}, {ID: 2, Key: "a", TS: 200}, {ID: 3, Key: "a", TS: 20}}
	right := []rec{{ID: 11, Key: "a", TS: 50}, {ID: 12, Key: "a", TS: 210}, {ID: 13, Key: "a", TS: 250}}
	j := stepJob()
	l := weir.KeyBy(stepSource(j, left, 0), recKey)
	r := weir.KeyBy(weir.EventTime(weir.Source(j, "right", weir.SliceSource[rec]{Records: right, BatchSize: 1}), recTS, 0), recKey)
	out := &bag[joined]{}
	weir.Sink(weir.Join(l, r, weir.Tumbling(100*time.Millisecond), joinRecs), out)
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkBag(t, out.out, []joined{{"a", 1, 11}, {"a", 2, 12}, {"a", 2, 13}})
	if n := j.Metrics().Late; n != 1 {
		t.Errorf("Metrics().Late = %d, want 1 (the left record at 20 ms)", n)
	}
}

func TestEmptyInput(t *testing.T) {
	j := weir.NewJob("empty", weir.Workers(4), weir.EpochRecords(1))
	ws := weir.Window(weir.KeyBy(weir.EventTime(weir.Source(j, "src", weir.SliceSource[rec]{}), recTS, 0), recKey), weir.Tumbling(time.Second))
	out := &bag[weir.WindowResult[string, int64]]{}
	weir.Sink(weir.Count(ws), out)
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(out.out) != 0 || out.closed != 1 {
		t.Errorf("output %v, closed %d times; want nothing, closed once", out.out, out.closed)
	}
}

// failing is an Input whose readers fail after a few batches.
type failing struct{ err error }

func (f failing) Open(weir.SourceContext) (weir.Reader[int], error) {
	return &failReader{err: f.err}, nil
}

type failReader struct {
	n   int
	err error
}

func (r *failReader) Read() ([]int, error) {
	if r.n++; r.n > 3 && r.err != nil {
		return nil, r.err
	}
	return []int{r.n}, nil
}
func (r *failReader) Close() error { return nil }

func TestErrorsStopTheJob(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name  string
		build func(j *weir.Job)
		want  func(error) bool
	}{
		{"reader error", func(j *weir.Job) {
			weir.Sink(weir.Source(j, "src", failing{boom}), &bag[int]{})
		}, func(err error) bool { return errors.Is(err, boom) }},
		{"sink error", func(j *weir.Job) {
			weir.Sink(weir.Source(j, "src", failing{}), weir.SinkFunc[int](func([]int) error { return boom }))
		}, func(err error) bool { return errors.Is(err, boom) }},
		{"panic in map", func(j *weir.Job) {
			m := weir.Map(weir.Source(j, "src", failing{}), func(n int) int { return 10 / (n - 2) }, weir.Stateless())
			weir.Sink(m, &bag[int]{}, weir.Parallelism(3))
		}, func(err error) bool { return err != nil && strings.Contains(err.Error(), "panic") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := weir.NewJob("fail", weir.Workers(2), weir.BatchInterval(time.Millisecond))
			tt.build(j)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := j.Run(ctx); !tt.want(err) || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Run("cancel", func(t *testing.T) {
		j := weir.NewJob("cancel", weir.Workers(2), weir.BatchInterval(time.Millisecond))
		weir.Sink(weir.Source(j, "src", failing{}), weir.SinkFunc[int](func([]int) error { return nil }))
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if err := j.Run(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Run: %v, want the context's error", err)
		}
	})
}
