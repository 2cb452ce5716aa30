package weir_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// countingInput counts opened and closed readers; failOpen makes the open
// of that instance fail.
type countingInput struct {
	opened, closed *atomic.Int64
	failOpen       int
}

func (c countingInput) Open(ctx weir.SourceContext) (weir.Reader[int], error) {
	if ctx.Instance == c.failOpen {
		return nil, errors.New("cannot open")
	}
	c.opened.Add(1)
	return &endlessReader{closed: c.closed, buf: make([]int, 64)}, nil
}

type endlessReader struct {
	closed *atomic.Int64
	buf    []int
}

func (r *endlessReader) Read() ([]int, error) { return r.buf, nil }
func (r *endlessReader) Close() error         { r.closed.Add(1); return nil }

// TestReadersClosedOnEveryExit checks that every opened reader is closed
// when a sink fails, when the context is cancelled and when another
// instance's reader fails to open.
func TestReadersClosedOnEveryExit(t *testing.T) {
	sinkErr := errors.New("disk full")
	tests := []struct {
		name     string
		failOpen int
		sink     weir.Output[int]
		timeout  time.Duration
		want     error
	}{
		{"sink error", -1, weir.SinkFunc[int](func([]int) error { return sinkErr }), time.Minute, sinkErr},
		{"cancel", -1, weir.SinkFunc[int](func([]int) error { return nil }), 50 * time.Millisecond, context.DeadlineExceeded},
		{"open fails", 2, weir.SinkFunc[int](func([]int) error { return nil }), time.Minute, nil},
	}
	for _, tt := range tests {
		var opened, closed atomic.Int64
		job := weir.NewJob("close", weir.Workers(3))
		weir.Sink(weir.Source(job, "src", countingInput{&opened, &closed, tt.failOpen}), tt.sink, weir.Parallelism(3))
		ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
		err := job.Run(ctx)
		cancel()
		if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("%s: Run = %v; want %v", tt.name, err, tt.want)
		}
		if opened.Load() == 0 && tt.failOpen != 0 {
			t.Errorf("%s: no reader was opened", tt.name)
		}
		if opened.Load() != closed.Load() {
			t.Errorf("%s: %d readers opened, %d closed", tt.name, opened.Load(), closed.Load())
		}
	}
}

func TestPanicNamesTheOperator(t *testing.T) {
	job := weir.NewJob("panic", weir.Workers(2))
	src := weir.Source(job, "numbers", weir.SliceSource[int]{Records: []int{1, 2, 0, 4}})
	inv := weir.Map(src, func(x int) int { return 12 / x }, weir.Name("divide"), weir.Stateless())
	weir.Sink(weir.Filter(inv, func(int) bool { return true }, weir.Stateless()), weir.SinkFunc[int](func([]int) error { return nil }))
	err := job.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "panic: divide: runtime error: integer divide by zero") {
		t.Fatalf("Run = %v; want a panic naming the divide operator", err)
	}
}

// epochCounter records how many records each epoch brought.
type epochCounter struct {
	n      int
	counts []int
}

func (c *epochCounter) Write(b []int) error { c.n += len(b); return nil }
func (c *epochCounter) Close() error        { return nil }
func (c *epochCounter) EndEpoch(uint64) error {
	c.counts = append(c.counts, c.n)
	c.n = 0
	return nil
}

// TestEpochRecordsExact checks that count-based epochs hold exactly N
// records even when the reader returns much bigger batches.
func TestEpochRecordsExact(t *testing.T) {
	in := make([]int, 2550)
	job := weir.NewJob("exact", weir.Workers(1), weir.EpochRecords(100))
	c := &epochCounter{}
	weir.Sink(weir.Source(job, "src", weir.SliceSource[int]{Records: in, BatchSize: 1000}), c)
	if err := job.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, n := range c.counts {
		want := 100
		if i == 25 {
			want = 50 // the final epoch has the rest
		}
		if n != want {
			t.Fatalf("epoch %d had %d records; want %d (all: %v)", i, n, want, c.counts)
		}
	}
	if len(c.counts) != 26 {
		t.Fatalf("%d epochs; want 26: %v", len(c.counts), c.counts)
	}
}

// TestOperatorErrorWrappingEOFFails checks that an error wrapping io.EOF
// from a sink fails the job instead of ending the input.
func TestOperatorErrorWrappingEOFFails(t *testing.T) {
	job := weir.NewJob("eof", weir.Workers(1))
	src := weir.Source(job, "numbers", weir.SliceSource[int]{Records: make([]int, 1000), BatchSize: 10})
	weir.Sink(src, weir.SinkFunc[int](func([]int) error { return fmt.Errorf("conn write: %w", io.EOF) }))
	if err := job.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "conn write") {
		t.Fatalf("Run = %v; want the sink's error", err)
	}
}

// TestPanicNamesInnermostOperator checks that panics in a key function, a
// sink and an aggregator are not blamed on the map before them.
func TestPanicNamesInnermostOperator(t *testing.T) {
	tests := []struct {
		name  string
		build func(s weir.Stream[int])
		want  string
	}{
		{"sink", func(s weir.Stream[int]) {
			weir.Sink(s, weir.SinkFunc[int](func([]int) error { panic("sink boom") }), weir.Name("out"))
		}, "panic: out: sink boom"},
		{"key", func(s weir.Stream[int]) {
			ws := weir.Window(weir.KeyBy(s, func(int) int { panic("key boom") }), weir.Global(),
				weir.WindowOptions(weir.Name("counts")))
			weir.Sink(weir.Count(ws), weir.SinkFunc[weir.WindowResult[int, int64]](func([]weir.WindowResult[int, int64]) error { return nil }))
		}, "panic: counts: key boom"},
	}
	for _, tt := range tests {
		job := weir.NewJob("panic", weir.Workers(1))
		src := weir.Source(job, "numbers", weir.SliceSource[int]{Records: []int{1, 2, 3}})
		tt.build(weir.Map(src, func(x int) int { return x }, weir.Name("innocent"), weir.Stateless()))
		err := job.Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Run = %v; want %q", tt.name, err, tt.want)
		}
	}
}

// TestCombinerCacheSurvivesGC makes keys that are equal in content but
// freshly allocated for every record, and collects garbage often, so that
// the memory of one key is reused for another of the same length while
// the epoch is still open. Counts must stay exact.
func TestCombinerCacheSurvivesGC(t *testing.T) {
	const keys, per = 50, 4000
	in := make([]int, keys*per)
	for i := range in {
		in[i] = 1000 + i%keys
	}
	job := weir.NewJob("gc", weir.Workers(1), weir.BatchInterval(time.Hour))
	n := 0
	src := weir.Source(job, "src", weir.SliceSource[int]{Records: in})
	// The key is made anew for every record: only the first occurrence of
	// each is kept by the combiner, the others become garbage at once.
	keyed := weir.KeyBy(src, func(v int) string {
		n++
		if n%5000 == 0 {
			runtime.GC()
		}
		return strconv.Itoa(v)
	})
	out := &weir.Collect[weir.WindowResult[string, int64]]{}
	weir.Sink(weir.Count(weir.Window(keyed, weir.Global())), out)
	if err := job.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := out.Records()
	if len(got) != keys {
		t.Fatalf("%d keys; want %d", len(got), keys)
	}
	for _, r := range got {
		if r.Value != per {
			t.Errorf("key %s counted %d; want %d", r.Key, r.Value, per)
		}
	}
}
