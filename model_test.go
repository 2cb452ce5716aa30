package weir_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// rec is the record type of the model tests. ID is unique per input.
type rec struct {
	ID  int
	Key string
	TS  int64
	Val int64
}

// maxDelay bounds the arrival delay of genRecs' records; outOfOrder is the
// watermark slack the tests give EventTime (at least maxDelay).
const (
	maxDelay   = 40
	outOfOrder = 50 * time.Millisecond
)

// genRecs makes n records over keys with timestamps increasing by 0..3 ms,
// then orders them by arrival = ts + a random delay of at most delay ms: a
// record never arrives more than delay ms of event time after a record with
// a larger timestamp.
func genRecs(seed uint64, n, keys int, delay int64) []rec {
	r := rand.New(rand.NewPCG(seed, 7))
	type arr struct {
		at int64
		r  rec
	}
	in := make([]arr, n)
	ts := int64(1_000_000)
	for i := range in {
		ts += int64(r.IntN(4))
		in[i] = arr{ts + r.Int64N(delay+1), rec{ID: i, Key: fmt.Sprintf("k%d", r.IntN(keys)), TS: ts, Val: int64(r.IntN(1000))}}
	}
	slices.SortStableFunc(in, func(a, b arr) int { return cmp.Compare(a.at, b.at) })
	out := make([]rec, n)
	for i, a := range in {
		out[i] = a.r
	}
	return out
}

func recTS(r rec) int64   { return r.TS }
func recKey(r rec) string { return r.Key }

// bag is an Output that collects every record; it is safe for concurrent
// use, so it also serves sinks with Parallelism.
type bag[T any] struct {
	mu     sync.Mutex
	out    []T
	closed int
}

func (b *bag[T]) Write(v []T) error {
	b.mu.Lock()
	b.out = append(b.out, v...)
	b.mu.Unlock()
	return nil
}

func (b *bag[T]) Close() error {
	b.mu.Lock()
	b.closed++
	b.mu.Unlock()
	return nil
}

// slowInput is a SliceSource whose readers pause before every fourth read,
// so that time-based epochs end many times during the input.
type slowInput[T any] struct {
	weir.SliceSource[T]
	pause time.Duration
}

func (s slowInput[T]) Open(ctx weir.SourceContext) (weir.Reader[T], error) {
	r, err := s.SliceSource.Open(ctx)
	return &slowReader[T]{Reader: r, pause: s.pause}, err
}

type slowReader[T any] struct {
	weir.Reader[T]
	pause time.Duration
	reads int
}

func (r *slowReader[T]) Read() ([]T, error) {
	if r.reads++; r.reads%4 == 0 {
		time.Sleep(r.pause)
	}
	return r.Reader.Read()
}

// runCfg is one way of running a job: workers and how epochs are cut.
type runCfg struct {
	name    string
	workers int
	opts    []weir.JobOption
	timed   bool // time-based epochs: sources must be slow
}

// runCfgs are the configurations every model test runs under: 1, 2, 4 and 8
// workers, with small batches and either record-count or 2 ms epochs.
func runCfgs() []runCfg {
	var cs []runCfg
	for _, w := range []int{1, 2, 4, 8} {
		cs = append(cs,
			runCfg{fmt.Sprintf("w%d/records", w), w, []weir.JobOption{weir.Workers(w), weir.BatchSize(16), weir.EpochRecords(37), weir.QueueDepth(4)}, false},
			runCfg{fmt.Sprintf("w%d/interval", w), w, []weir.JobOption{weir.Workers(w), weir.BatchSize(32), weir.BatchInterval(2 * time.Millisecond)}, true},
		)
	}
	return cs
}

func (c runCfg) job() *weir.Job { return weir.NewJob("model", c.opts...) }

// source adds recs as a source: read in batches of 23 records, slowly when
// epochs are time-based.
func source[T any](c runCfg, j *weir.Job, name string, recs []T, opts ...weir.Option) weir.Stream[T] {
	s := weir.SliceSource[T]{Records: recs, BatchSize: 23}
	if c.timed {
		return weir.Source(j, name, slowInput[T]{s, 500 * time.Microsecond}, opts...)
	}
	return weir.Source(j, name, s, opts...)
}

// timedSource is source followed by EventTime with outOfOrder slack. The
// options apply to both, so that each EventTime instance sees the records of
// one source split, in their bounded disorder.
func timedSource(c runCfg, j *weir.Job, name string, recs []rec, opts ...weir.Option) weir.Stream[rec] {
	return weir.EventTime(source(c, j, name, recs, opts...), recTS, outOfOrder, opts...)
}

// run runs j and fails the test on error or on any late record.
func run(t *testing.T, j *weir.Job) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := j.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if late := j.Metrics().Late; late != 0 {
		t.Errorf("%d late records; the input's disorder is within the watermark slack", late)
	}
}

// checkBag compares got and want as multisets and reports a few
// differences.
func checkBag[T comparable](t *testing.T, got, want []T) {
	t.Helper()
	if len(want) == 0 {
		t.Fatal("the model expects no output: the test input is too weak")
	}
	diff := map[T]int{}
	for _, v := range got {
		diff[v]++
	}
	for _, v := range want {
		diff[v]--
	}
	var bad []string
	for v, n := range diff {
		if n != 0 {
			bad = append(bad, fmt.Sprintf("%+v: %+d", v, n))
		}
	}
	if len(bad) == 0 {
		return
	}
	slices.Sort(bad)
	t.Errorf("got %d records, want %d; %d differ (extra +, missing -), e.g.:\n  %s",
		len(got), len(want), len(bad), joinFirst(bad, 8))
}

func joinFirst(s []string, n int) string {
	out := ""
	for i, x := range s {
		if i == n {
			return out + fmt.Sprintf("\n  ... and %d more", len(s)-n)
		}
		if i > 0 {
			out += "\n  "
		}
		out += x
	}
	return out
}

// winKey names one window of one key.
type winKey struct {
	Key        string
	Start, End int64
}
