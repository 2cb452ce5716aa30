package weir_test

import (
	"context"
	"errors"
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
	inv := weir.Map(src, func(x int) int { return 12 / x }, weir.Name("divide"))
	weir.Sink(weir.Filter(inv, func(int) bool { return true }), weir.SinkFunc[int](func([]int) error { return nil }))
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
