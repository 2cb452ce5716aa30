// Job shapes around the micro-batch exchange (microbatch.go, strategies
// pkg and prompt) that once deadlocked or pinned memory, and behaviour
// pinned across topologies. Hangs are reported as failures (runWithin),
// not as a hung test binary.
package weir_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
	"weak"

	"github.com/weirstream/weir"
)

// splitInput gives instance i exactly parts[i] (whatever the parallelism),
// so that source instances can have very different sizes.
type splitInput[T any] struct {
	parts [][]T
	batch int
	pause time.Duration // before every read, if set
}

func (s splitInput[T]) Open(ctx weir.SourceContext) (weir.Reader[T], error) {
	var recs []T
	if ctx.Instance < len(s.parts) {
		recs = s.parts[ctx.Instance]
	}
	b := s.batch
	if b <= 0 {
		b = 1
	}
	return &splitReader[T]{recs: recs, batch: b, pause: s.pause}, nil
}

type splitReader[T any] struct {
	recs  []T
	batch int
	pause time.Duration
}

func (r *splitReader[T]) Read() ([]T, error) {
	if r.pause > 0 {
		time.Sleep(r.pause)
	}
	if len(r.recs) == 0 {
		return nil, io.EOF
	}
	n := min(r.batch, len(r.recs))
	b := r.recs[:n:n]
	r.recs = r.recs[n:]
	return b, nil
}

func (r *splitReader[T]) Close() error { return nil }

// runWithin runs j and reports a hang (a deadlock: Run does not return)
// as a test failure instead of hanging the test binary.
func runWithin(t *testing.T, j *weir.Job, d time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- j.Run(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
	}
	buf := make([]byte, 1<<20)
	t.Logf("goroutines at the hang:\n%s", buf[:runtime.Stack(buf, true)])
	cancel()
	select {
	case err := <-done:
		t.Errorf("Run did not return within %s (deadlock); after cancel it returned %v", d, err)
		return errHung
	case <-time.After(5 * time.Second):
		t.Fatalf("Run did not return within %s, nor 5s after its context was cancelled", d)
		return nil
	}
}

var errHung = errors.New("hung")

func wordsOf(n, keys int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, (i*7)%keys)
	}
	return out
}

func countWords(parts ...[]string) map[string]int64 {
	m := map[string]int64{}
	for _, p := range parts {
		for _, w := range p {
			m[w]++
		}
	}
	return m
}

func sumResults(rs []weir.WindowResult[string, int64]) map[string]int64 {
	m := map[string]int64{}
	for _, r := range rs {
		m[r.Key] += r.Value
	}
	return m
}

// sameCounts compares counts by key, naming at most five that differ.
func sameCounts[V comparable](t *testing.T, what string, got, want map[string]V) {
	t.Helper()
	bad := 0
	for k, n := range want {
		if got[k] != n {
			if bad < 5 {
				t.Errorf("%s: count(%q) = %v, want %v", what, k, got[k], n)
			}
			bad++
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			if bad < 5 {
				t.Errorf("%s: unexpected key %q = %v", what, k, n)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d keys differ", what, bad)
	}
}

var microStrategies = []string{"pkg", "prompt"}

var controlStrategies = []string{"hash", "roundrobin"}

// Two aggregations fed by one keyed stream: both micro-batch exchanges
// sit in the same tee of every source instance, and instance 0 is empty,
// so final at once. Senders that waited for one another inside an
// exchange (while still owing markers to the tee's other consumers) would
// deadlock here; senders never wait for one another.
func TestMicroTwoAggregationsUnevenSources(t *testing.T) {
	for _, strategy := range microStrategies {
		for _, epochs := range []string{"records", "interval"} {
			t.Run(strategy+"/"+epochs, func(t *testing.T) {
				parts := [][]string{nil, wordsOf(50, 5, "w")}
				opts := []weir.JobOption{weir.Workers(2), weir.Partitioning(strategy)}
				if epochs == "records" {
					opts = append(opts, weir.EpochRecords(10))
				} else {
					opts = append(opts, weir.BatchInterval(time.Millisecond))
				}
				j := weir.NewJob("two", opts...)
				src := weir.Source(j, "src", splitInput[string]{parts: parts, batch: 5, pause: 200 * time.Microsecond})
				k := weir.KeyBy(src, func(s string) string { return s })
				a, b := &bag[weir.WindowResult[string, int64]]{}, &bag[weir.WindowResult[string, int64]]{}
				weir.Sink(weir.Count(weir.Window(k, weir.Global())), a)
				weir.Sink(weir.Count(weir.Window(k, weir.Global())), b)
				if err := runWithin(t, j, 30*time.Second); err != nil {
					if err != errHung {
						t.Fatal(err)
					}
					return
				}
				want := countWords(parts...)
				sameCounts(t, "first", sumResults(a.out), want)
				sameCounts(t, "second", sumResults(b.out), want)
			})
		}
	}
}

// Control: the same job under the strategies without a barrier.
func TestMicroTwoAggregationsUnevenSourcesControl(t *testing.T) {
	for _, strategy := range controlStrategies {
		t.Run(strategy, func(t *testing.T) {
			parts := [][]string{nil, wordsOf(50, 5, "w")}
			j := weir.NewJob("two", weir.Workers(2), weir.Partitioning(strategy), weir.EpochRecords(10))
			src := weir.Source(j, "src", splitInput[string]{parts: parts, batch: 5})
			k := weir.KeyBy(src, func(s string) string { return s })
			a, b := &bag[weir.WindowResult[string, int64]]{}, &bag[weir.WindowResult[string, int64]]{}
			weir.Sink(weir.Count(weir.Window(k, weir.Global())), a)
			weir.Sink(weir.Count(weir.Window(k, weir.Global())), b)
			if err := runWithin(t, j, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			want := countWords(parts...)
			sameCounts(t, "first", sumResults(a.out), want)
			sameCounts(t, "second", sumResults(b.out), want)
		})
	}
}

// One aggregation, and the same source chain also feeds a sink of the
// raw records (created after the aggregation, so it
// comes second in the chain's tee). Instance 0 is final at once and waits
// in the barrier before it sends its final marker to the sink; instance 1,
// past that round, sends its next epoch's records to the sink, which does
// not read them (instance 1 is ahead there, instance 0 owes a marker):
// had instance 0 waited for instance 1 before forwarding, both would block.
func TestMicroAggregationAndRawSinkUnevenSources(t *testing.T) {
	for _, strategy := range append(microStrategies, controlStrategies...) {
		t.Run(strategy, func(t *testing.T) {
			parts := [][]string{nil, wordsOf(200, 5, "w")}
			j := weir.NewJob("tee", weir.Workers(2), weir.Partitioning(strategy), weir.EpochRecords(20),
				weir.BatchSize(1), weir.QueueDepth(1))
			src := weir.Source(j, "src", splitInput[string]{parts: parts, batch: 1})
			counts := &bag[weir.WindowResult[string, int64]]{}
			raw := &bag[string]{}
			weir.Sink(weir.Count(weir.Window(weir.KeyBy(src, func(s string) string { return s }), weir.Global())), counts)
			weir.Sink(src, raw)
			if err := runWithin(t, j, 30*time.Second); err != nil {
				if err != errHung {
					t.Fatal(err)
				}
				return
			}
			sameCounts(t, "counts", sumResults(counts.out), countWords(parts...))
			if len(raw.out) != 200 {
				t.Errorf("raw sink got %d records, want 200", len(raw.out))
			}
		})
	}
}

// No final marker involved. With a 1 ms interval, a
// source instance that stalls (here 10 ms before its first read) ends
// several epochs with one marker: it is ahead. An exchange whose ahead
// sender waited for a round that needs the other
// would hang; both instances still have input left, so neither is final.
func TestMicroTwoAggregationsAheadSender(t *testing.T) {
	for _, strategy := range microStrategies {
		t.Run(strategy, func(t *testing.T) {
			parts := [][]string{wordsOf(300, 5, "a"), wordsOf(300, 5, "b")}
			j := weir.NewJob("ahead", weir.Workers(2), weir.Partitioning(strategy), weir.BatchInterval(time.Millisecond))
			src := weir.Source(j, "src", stallInput{parts: parts, stall: 10 * time.Millisecond})
			k := weir.KeyBy(src, func(s string) string { return s })
			x, y := &bag[weir.WindowResult[string, int64]]{}, &bag[weir.WindowResult[string, int64]]{}
			weir.Sink(weir.Count(weir.Window(k, weir.Global())), x)
			weir.Sink(weir.Count(weir.Window(k, weir.Global())), y)
			if err := runWithin(t, j, 30*time.Second); err != nil {
				if err != errHung {
					t.Fatal(err)
				}
				return
			}
			want := countWords(parts...)
			sameCounts(t, "first", sumResults(x.out), want)
			sameCounts(t, "second", sumResults(y.out), want)
		})
	}
}

// stallInput: both instances read one record per 300 µs; instance 1 first
// stalls for stall.
type stallInput struct {
	parts [][]string
	stall time.Duration
}

func (m stallInput) Open(ctx weir.SourceContext) (weir.Reader[string], error) {
	r := &splitReader[string]{recs: m.parts[ctx.Instance], batch: 1, pause: 300 * time.Microsecond}
	if ctx.Instance == 1 {
		return &stallReader{splitReader: r, stall: m.stall}, nil
	}
	return r, nil
}

type stallReader struct {
	*splitReader[string]
	stall time.Duration
}

func (r *stallReader) Read() ([]string, error) {
	if r.stall > 0 {
		time.Sleep(r.stall)
		r.stall = 0
	}
	return r.splitReader.Read()
}

type wres = weir.WindowResult[string, int64]

// microTopo is a job shape feeding keyed counts, with its sequential model.
type microTopo struct {
	name  string
	build func(c runCfg, j *weir.Job, in []rec) weir.Stream[wres]
	model func(in []rec) []wres
}

func slidingCount(in []rec) []wres {
	m := fixedWindows(func(ts int64) [][2]int64 {
		var out [][2]int64
		for s := ts - ts%30; s > ts-100; s -= 30 {
			out = append(out, [2]int64{s, s + 100})
		}
		return out
	})(in)
	return results(m, func(rs []rec) int64 { return int64(len(rs)) })
}

func microTopos() []microTopo {
	return []microTopo{
		{"single-tumbling", func(c runCfg, j *weir.Job, in []rec) weir.Stream[wres] {
			return weir.Count(weir.Window(weir.KeyBy(timedSource(c, j, "src", in), recKey), weir.Tumbling(100*time.Millisecond)))
		}, func(in []rec) []wres { return tumbleCount(in, 100) }},
		{"union-uneven", func(c runCfg, j *weir.Job, in []rec) weir.Stream[wres] {
			a := timedSource(c, j, "a", in[:len(in)/3])
			b := timedSource(c, j, "b", in[len(in)/3:], weir.Parallelism(3))
			return weir.Count(weir.Window(weir.KeyBy(weir.Union(a, b), recKey), weir.Tumbling(100*time.Millisecond)))
		}, func(in []rec) []wres { return tumbleCount(in, 100) }},
		{"rebalance-sliding-lateness", func(c runCfg, j *weir.Job, in []rec) weir.Stream[wres] {
			s := timedSource(c, j, "src", in, weir.Parallelism(1))
			m := weir.Map(s, func(r rec) rec { return r }, weir.Parallelism(3), weir.Stateless())
			return weir.Count(weir.Window(weir.KeyBy(m, recKey), weir.Sliding(100*time.Millisecond, 30*time.Millisecond),
				weir.AllowedLateness(40*time.Millisecond)))
		}, slidingCount},
		{"source-par3-window-par5", func(c runCfg, j *weir.Job, in []rec) weir.Stream[wres] {
			s := timedSource(c, j, "src", in, weir.Parallelism(3))
			return weir.Count(weir.Window(weir.KeyBy(s, recKey), weir.Tumbling(100*time.Millisecond),
				weir.WindowOptions(weir.Parallelism(5))))
		}, func(in []rec) []wres { return tumbleCount(in, 100) }},
		{"global-skewed", func(c runCfg, j *weir.Job, in []rec) weir.Stream[wres] {
			return weir.Count(weir.Window(weir.KeyBy(source(c, j, "src", skewed(in)), recKey), weir.Global()))
		}, func(in []rec) []wres { return globalCount(skewed(in), recKey) }},
		{"two-windows-one-stream", func(c runCfg, j *weir.Job, in []rec) weir.Stream[wres] {
			k := weir.KeyBy(timedSource(c, j, "src", in), recKey)
			a := weir.Count(weir.Window(k, weir.Tumbling(100*time.Millisecond)))
			b := weir.Count(weir.Window(k, weir.Tumbling(50*time.Millisecond)))
			return weir.Union(a, b)
		}, func(in []rec) []wres { return append(tumbleCount(in, 100), tumbleCount(in, 50)...) }},
	}
}

// TestMicroTopologiesMicro runs every shape under pkg and prompt (and
// roundrobin as the control), 1..8 workers, record and interval epochs,
// against the sequential model, failing on a hang rather than hanging.
func TestMicroTopologiesMicro(t *testing.T) {
	in := genRecs(91, 3001, 13, maxDelay)
	for _, strategy := range []string{"roundrobin", "pkg", "prompt"} {
		for _, tp := range microTopos() {
			want := tp.model(in)
			for _, c := range runCfgs() {
				t.Run(strategy+"/"+tp.name+"/"+c.name, func(t *testing.T) {
					t.Parallel()
					c.opts = append(slices.Clone(c.opts), weir.Partitioning(strategy))
					j := c.job()
					out := &bag[wres]{}
					weir.Sink(tp.build(c, j, in), out)
					if err := runWithin(t, j, 30*time.Second); err != nil {
						if err != errHung {
							t.Fatal(err)
						}
						return
					}
					if late := j.Metrics().Late; late != 0 {
						t.Errorf("%d late records", late)
					}
					checkBag(t, out.out, want)
				})
			}
		}
	}
}

// failAfter fails its n-th Write.
type failAfter struct {
	mu sync.Mutex
	n  int
}

var errSink = errors.New("test sink failed")

func (f *failAfter) Write(v []wres) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n--; f.n == 0 {
		return errSink
	}
	return nil
}
func (f *failAfter) Close() error { return nil }

// TestMicroFailuresMidRound: a failing sink, a panicking Add and a
// cancelled context must each end Run with that cause, not a secondary
// error of the exchange ("weir: job stopping"), and without hanging.
func TestMicroFailuresMidRound(t *testing.T) {
	in := genRecs(93, 4000, 13, maxDelay)
	for _, strategy := range microStrategies {
		for _, w := range []int{1, 2, 3, 4, 8} {
			for _, kind := range []string{"sink", "add-panic", "cancel"} {
				t.Run(fmt.Sprintf("%s/w%d/%s", strategy, w, kind), func(t *testing.T) {
					t.Parallel()
					j := weir.NewJob("fail", weir.Workers(w), weir.Partitioning(strategy), weir.EpochRecords(50), weir.BatchSize(8), weir.QueueDepth(2))
					var src weir.Stream[rec]
					if kind == "cancel" {
						src = weir.Source(j, "src", endlessInput{in})
					} else {
						src = weir.Source(j, "src", slowInput[rec]{weir.SliceSource[rec]{Records: in, BatchSize: 10}, 200 * time.Microsecond})
					}
					ws := weir.Window(weir.KeyBy(weir.EventTime(src, recTS, outOfOrder), recKey), weir.Tumbling(50*time.Millisecond))
					var seen atomicCounter
					agg := weir.Aggregator[rec, int64, int64]{
						Add: func(a int64, r rec) int64 {
							if kind == "add-panic" && seen.inc() == 2000 {
								panic("test add failed")
							}
							return a + 1
						},
						Merge: func(a, b int64) int64 { return a + b },
					}
					weir.Sink(weir.Aggregate(ws, agg), &failAfter{n: map[string]int{"sink": 5}[kind] - 0})
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					if kind == "cancel" {
						time.AfterFunc(30*time.Millisecond, cancel)
					}
					done := make(chan error, 1)
					go func() { done <- j.Run(ctx) }()
					var err error
					select {
					case err = <-done:
					case <-time.After(20 * time.Second):
						t.Fatal("Run hung")
					}
					switch kind {
					case "sink":
						if !errors.Is(err, errSink) {
							t.Errorf("Run = %v, want the sink's error", err)
						}
					case "add-panic":
						if err == nil || !strings.Contains(err.Error(), "test add failed") {
							t.Errorf("Run = %v, want the Add panic", err)
						}
					case "cancel":
						if !errors.Is(err, context.Canceled) {
							t.Errorf("Run = %v, want context.Canceled", err)
						}
					}
				})
			}
		}
	}
}

type atomicCounter struct {
	mu sync.Mutex
	n  int
}

func (c *atomicCounter) inc() int { c.mu.Lock(); defer c.mu.Unlock(); c.n++; return c.n }

// endless repeats its records (timestamps moving on) until the job stops.
type endlessInput struct{ recs []rec }

func (e endlessInput) Open(ctx weir.SourceContext) (weir.Reader[rec], error) {
	return &endlessInputReader{recs: e.recs}, nil
}

type endlessInputReader struct {
	recs []rec
	pos  int
	lap  int64
	buf  []rec
}

func (r *endlessInputReader) Read() ([]rec, error) {
	r.buf = r.buf[:0]
	for range 10 {
		x := r.recs[r.pos]
		x.TS += r.lap * 1_000_000
		r.buf = append(r.buf, x)
		if r.pos++; r.pos == len(r.recs) {
			r.pos, r.lap = 0, r.lap+1
		}
	}
	return r.buf, nil
}

func (r *endlessInputReader) Close() error { return nil }

// pinReader returns four records whose keys are substrings of one large
// chunk, then two records from another chunk (an epoch that has not ended
// yet), then nothing for a while: an idle input. While idle, epoch 0 has
// ended and its round has run, so nothing should keep the first chunk
// alive any more. It checks that with a weak pointer and then ends.
type pinInput struct{ collected chan bool }

func (p pinInput) Open(weir.SourceContext) (weir.Reader[string], error) {
	return &pinReader{collected: p.collected}, nil
}

type pinReader struct {
	collected chan bool
	reads     int
	chunk1    weak.Pointer[byte]
	buf       []string
}

func chunkKeys(n int) (weak.Pointer[byte], []string) {
	chunk := strings.Repeat("abcdefgh", 1<<17) // 1 MiB
	keys := make([]string, n)
	for i := range keys {
		keys[i] = chunk[i*8 : i*8+3+i%5]
	}
	return weak.Make(unsafe.StringData(chunk)), keys
}

func (r *pinReader) Read() ([]string, error) {
	r.reads++
	switch {
	case r.reads == 1:
		var keys []string
		r.chunk1, keys = chunkKeys(4)
		r.buf = keys
		return r.buf, nil
	case r.reads == 2:
		_, keys := chunkKeys(2)
		r.buf = keys // the first chunk's records are no longer the reader's
		return r.buf, nil
	case r.reads < 40:
		time.Sleep(2 * time.Millisecond)
		return nil, nil
	case r.reads == 40:
		runtime.GC()
		runtime.GC()
		r.collected <- r.chunk1.Value() == nil
		return nil, nil
	}
	return nil, io.EOF
}

func (r *pinReader) Close() error { return nil }

// An idle input must not pin the input chunk its last epoch's keys point
// into: every strategy forgets an epoch's keys once it is processed.
func TestMicroIdleInputPinsChunk(t *testing.T) {
	for _, strategy := range []string{"hash", "roundrobin", "pkg", "prompt"} {
		t.Run(strategy, func(t *testing.T) {
			collected := make(chan bool, 1)
			j := weir.NewJob("pin", weir.Workers(1), weir.EpochRecords(4), weir.Partitioning(strategy))
			src := weir.Source(j, "src", pinInput{collected})
			weir.Sink(weir.Count(weir.Window(weir.KeyBy(src, func(s string) string { return s }), weir.Global())),
				&bag[weir.WindowResult[string, int64]]{})
			// Generous: two forced collections under -race, with other
			// tests running in parallel, can take seconds.
			if err := runWithin(t, j, time.Minute); err != nil {
				t.Fatal(err)
			}
			if !<-collected {
				t.Errorf("the first epoch's input chunk is still reachable while the input is idle, after its round")
			}
		})
	}
}

// TestMicroEpochsThroughMicroEx: the epochs reported downstream of a
// micro-batch exchange increase, the last (only) one is final, and the
// watermark never goes back, with sources of uneven sizes (count-based
// epochs end at different numbers per instance, final markers at
// different times) and a union of two sources.
func TestMicroEpochsThroughMicroEx(t *testing.T) {
	in := genRecs(95, 3000, 11, maxDelay)
	for _, strategy := range microStrategies {
		for _, c := range runCfgs() {
			t.Run(strategy+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				var mu sync.Mutex
				var stats []weir.EpochStats
				opts := append(slices.Clone(c.opts), weir.Partitioning(strategy), weir.OnEpoch(func(s weir.EpochStats) {
					mu.Lock()
					stats = append(stats, s)
					mu.Unlock()
				}))
				j := weir.NewJob("epochs", opts...)
				a := timedSource(c, j, "a", in[:500], weir.Parallelism(2))
				b := timedSource(c, j, "b", in[500:])
				out := &bag[wres]{}
				weir.Sink(weir.Count(weir.Window(weir.KeyBy(weir.Union(a, b), recKey), weir.Tumbling(100*time.Millisecond))), out)
				if err := runWithin(t, j, 30*time.Second); err != nil {
					t.Fatal(err)
				}
				checkBag(t, out.out, tumbleCount(in, 100))
				wm := int64(-1 << 63)
				for i, s := range stats {
					if (i > 0 && s.Epoch <= stats[i-1].Epoch) || s.Final != (i == len(stats)-1) || s.Watermark < wm {
						t.Fatalf("epoch report %d of %d: %+v after watermark %d", i, len(stats), s, wm)
					}
					wm = s.Watermark
				}
			})
		}
	}
}

// TestMicroAggregationThenJoin: aggregation results joined with the raw
// stream of the same source chain (created after the aggregation, so
// second in the tee), with tiny queues. Lockstep (equal sources) must not
// hang; uneven sources (instance 0 empty) too.
func TestMicroAggregationThenJoin(t *testing.T) {
	for _, strategy := range append(microStrategies, "roundrobin") {
		for _, uneven := range []bool{false, true} {
			for _, w := range []int{1, 2, 3, 8} {
				if uneven && w == 1 {
					continue
				}
				t.Run(fmt.Sprintf("%s/uneven=%v/w%d", strategy, uneven, w), func(t *testing.T) {
					all := wordsOf(400, 7, "k")
					var parts [][]string
					if uneven {
						parts = [][]string{nil, all}
					} else {
						for i := range w {
							parts = append(parts, all[len(all)*i/w:len(all)*(i+1)/w])
						}
					}
					j := weir.NewJob("join", weir.Workers(w), weir.Partitioning(strategy), weir.EpochRecords(20),
						weir.BatchSize(1), weir.QueueDepth(1))
					src := weir.Source(j, "src", splitInput[string]{parts: parts, batch: 3})
					id := func(s string) string { return s }
					counts := weir.Count(weir.Window(weir.KeyBy(src, id), weir.Global()))
					joined := weir.Join(weir.KeyBy(counts, func(r wres) string { return r.Key }), weir.KeyBy(src, id), weir.Global(),
						func(k string, l wres, r string) int64 { return l.Value })
					out := &bag[int64]{}
					weir.Sink(joined, out)
					if err := runWithin(t, j, 30*time.Second); err != nil {
						if err != errHung {
							t.Fatal(err)
						}
						return
					}
					want := 0
					for _, n := range countWords(all) {
						want += int(n)
					}
					if len(out.out) != want {
						t.Errorf("%d joined records, want %d", len(out.out), want)
					}
				})
			}
		}
	}
}
