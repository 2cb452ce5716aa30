package weir_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

var strategies = []string{"hash", "roundrobin", "pkg", "prompt"}

// skewed rewrites the keys of in so that half the records have one key and
// a tenth another, the rest spread as before: hot keys that prompt splits.
func skewed(in []rec) []rec {
	out := slices.Clone(in)
	for i := range out {
		switch {
		case i%2 == 0:
			out[i].Key = "hot"
		case i%10 == 1:
			out[i].Key = "warm"
		}
	}
	return out
}

// TestStrategiesAgainstModel runs every window kind under every
// partitioning strategy, worker count and epoch kind, over skewed keys,
// and compares with the sequential model.
func TestStrategiesAgainstModel(t *testing.T) {
	in := skewed(genRecs(51, 6000, 37, maxDelay))
	for _, strategy := range strategies {
		t.Run(strategy, func(t *testing.T) {
			for _, wm := range winModels() {
				want := wm.assign(in)
				t.Run(wm.name, func(t *testing.T) {
					for _, c := range runCfgs() {
						t.Run(c.name, func(t *testing.T) {
							t.Parallel()
							c.opts = append(slices.Clone(c.opts), weir.Partitioning(strategy))
							window := func(j *weir.Job) weir.WindowedStream[string, rec] {
								return weir.Window(weir.KeyBy(timedSource(c, j, "src", in), recKey), wm.spec(), wm.opts...)
							}
							j := c.job()
							out := &bag[weir.WindowResult[string, float64]]{}
							weir.Sink(weir.Aggregate(window(j), average), out)
							run(t, j)
							checkBag(t, out.out, results(want, func(rs []rec) float64 {
								var a avgAcc
								for _, r := range rs {
									a = average.Add(a, r)
								}
								return average.Result(a)
							}))
							st := j.PartitionStats()
							if len(st) != 1 {
								t.Fatalf("PartitionStats: %d entries, want 1", len(st))
							}
							wantStrategy := strategy
							if wm.name == "session" {
								wantStrategy = "hash" // sessions are not pre-aggregated
							}
							if st[0].Strategy != wantStrategy {
								t.Errorf("strategy %q, want %q", st[0].Strategy, wantStrategy)
							}
							if st[0].Epochs == 0 {
								t.Errorf("no epochs accounted: %+v", st[0])
							}
						})
					}
				})
			}
		})
	}
}

// TestPromptSplitsHotKeys runs a global count over keys where one key has
// most records, with 4 workers: prompt must split it (two-level
// aggregation), keep the map blocks balanced, and count exactly; hash
// cannot split and shows the skew.
func TestPromptSplitsHotKeys(t *testing.T) {
	var words []string
	for i := range 40000 {
		switch {
		case i%3 != 0:
			words = append(words, "the")
		default:
			words = append(words, fmt.Sprintf("w%d", i%997))
		}
	}
	want := map[string]int64{}
	for _, w := range words {
		want[w]++
	}
	stats := map[string]weir.PartitionStats{}
	for _, strategy := range strategies {
		j := weir.NewJob("hot", weir.Workers(4), weir.EpochRecords(2000), weir.Partitioning(strategy))
		src := weir.Source(j, "words", weir.SliceSource[string]{Records: words, BatchSize: 100})
		out := &bag[weir.WindowResult[string, int64]]{}
		weir.Sink(weir.Count(weir.Window(weir.KeyBy(src, func(w string) string { return w }), weir.Global())), out)
		if err := j.Run(context.Background()); err != nil {
			t.Fatalf("%s: %v", strategy, err)
		}
		got := map[string]int64{}
		for _, r := range out.out {
			if _, dup := got[r.Key]; dup {
				t.Errorf("%s: key %q emitted twice", strategy, r.Key)
			}
			got[r.Key] = r.Value
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d keys, want %d", strategy, len(got), len(want))
		}
		for k, n := range want {
			if got[k] != n {
				t.Errorf("%s: count(%q) = %d, want %d", strategy, k, got[k], n)
			}
		}
		stats[strategy] = j.PartitionStats()[0]
	}
	p, h := stats["prompt"], stats["hash"]
	t.Logf("prompt %+v", p)
	t.Logf("hash   %+v", h)
	if p.SplitKeys == 0 {
		t.Error("prompt split no key, though one key has two thirds of the records")
	}
	if p.MapImbalance > 1.05 {
		t.Errorf("prompt map imbalance %.3f, want <= 1.05", p.MapImbalance)
	}
	if p.ReduceImbalance > 1.10 {
		t.Errorf("prompt reduce imbalance %.3f, want <= 1.10", p.ReduceImbalance)
	}
	// All of "the" reaches one owner under hash: at least 2/3 of the
	// records on one of 4 reducers.
	if h.ReduceImbalance < 2.5 {
		t.Errorf("hash reduce imbalance %.3f, want >= 2.5 with one key at 2/3 of the records", h.ReduceImbalance)
	}
	if p.Partitions != 4 || h.Partitions != 4 {
		t.Errorf("partitions: prompt %d, hash %d; want 4", p.Partitions, h.Partitions)
	}
}

func TestUnknownPartitioning(t *testing.T) {
	j := weir.NewJob("bad", weir.Partitioning("zigzag"))
	src := weir.Source(j, "src", weir.SliceSource[string]{Records: []string{"a"}})
	weir.Sink(weir.Count(weir.Window(weir.KeyBy(src, func(s string) string { return s }), weir.Global())), &bag[weir.WindowResult[string, int64]]{})
	err := j.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), `"zigzag"`) {
		t.Fatalf("Run = %v; want an error naming the unknown strategy", err)
	}
}

// TestPromptElasticTasks runs with an epoch interval so short that
// processing exceeds it: the controller must not leave the bounds, and
// results stay exact while the task count changes.
func TestPromptElasticTasks(t *testing.T) {
	in := skewed(genRecs(61, 20000, 200, 0))
	want := map[string]int64{}
	for _, r := range in {
		want[r.Key]++
	}
	var logBuf bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logBuf}, nil))
	j := weir.NewJob("elastic", weir.Workers(4), weir.BatchInterval(time.Millisecond), weir.Partitioning("prompt"), weir.Logger(logger))
	src := weir.Source(j, "src", slowInput[rec]{weir.SliceSource[rec]{Records: in, BatchSize: 50}, 200 * time.Microsecond})
	out := &bag[weir.WindowResult[string, int64]]{}
	weir.Sink(weir.Count(weir.Window(weir.KeyBy(src, recKey), weir.Global())), out)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := j.Run(ctx); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, r := range out.out {
		got[r.Key] += r.Value
	}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("count(%q) = %d, want %d", k, got[k], want[k])
		}
	}
	st := j.PartitionStats()[0]
	if st.MapTasks < 1 || st.MapTasks > 4 || st.ReduceTasks != st.MapTasks {
		t.Errorf("tasks out of bounds: %+v", st)
	}
	logMu.Lock()
	logged := strings.Count(logBuf.String(), "partition tasks changed")
	logMu.Unlock()
	if int64(logged) != st.TaskChanges {
		t.Errorf("%d changes logged, %d counted:\n%s", logged, st.TaskChanges, logBuf.String())
	}
	t.Logf("%+v", st)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestPromptReducersCountWindows: when an epoch spans several windows, hot
// keys make a partial per window, and the reduce table must weigh that to
// stay balanced.
func TestPromptReducersCountWindows(t *testing.T) {
	var in []rec
	for i := range 60000 {
		k := fmt.Sprintf("k%d", i%500)
		if i%3 != 0 {
			k = fmt.Sprintf("hot%d", i%4)
		}
		in = append(in, rec{ID: i, Key: k, TS: int64(i)}) // 1 ms apart: an epoch of 3000 spans 30 windows
	}
	want := map[winKey]int64{}
	for _, r := range in {
		s := r.TS - r.TS%100
		want[winKey{r.Key, s, s + 100}]++
	}
	j := weir.NewJob("windows", weir.Workers(4), weir.EpochRecords(3000), weir.Partitioning("prompt"))
	src := weir.EventTime(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 100}), recTS, 0)
	out := &bag[weir.WindowResult[string, int64]]{}
	weir.Sink(weir.Count(weir.Window(weir.KeyBy(src, recKey), weir.Tumbling(100*time.Millisecond))), out)
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := map[winKey]int64{}
	for _, r := range out.out {
		got[winKey{r.Key, r.Start, r.End}] += r.Value
	}
	if len(got) != len(want) {
		t.Fatalf("%d windows, want %d", len(got), len(want))
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("%+v: %d, want %d", k, got[k], n)
		}
	}
	st := j.PartitionStats()[0]
	t.Logf("%+v", st)
	if st.ReduceImbalance > 1.10 {
		t.Errorf("reduce imbalance %.3f with many windows per epoch, want <= 1.10", st.ReduceImbalance)
	}
}
