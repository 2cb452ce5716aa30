package prom_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/prom"
)

// A job's figures scraped as it runs and once it has run: the records counter is the
// size of its input, and the epochs and the latency summary's count are
// the epochs the job reports.
func TestFiguresOfARunJob(t *testing.T) {
	in := make([]int, 5000)
	for i := range in {
		in[i] = i
	}
	job := weir.NewJob("double", weir.Workers(2), weir.EpochRecords(250))
	out := &weir.Collect[int]{}
	weir.Sink(weir.Map(weir.Source(job, "src", weir.SliceSource[int]{Records: in}), func(x int) int { return 2 * x }), out)
	h := prom.Handler(job)
	if code, body := scrape(t, h, "/metrics"); code != 200 {
		t.Fatalf("before the run: status %d: %s", code, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Scraped while it runs too (under -race, a check that Stats may be
	// read from another goroutine).
	done := make(chan error, 1)
	go func() { done <- job.Run(ctx) }()
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		default:
			if code, body := scrape(t, h, "/metrics"); code != 200 {
				t.Fatalf("while running: status %d: %s", code, body)
			}
		}
	}
	if len(out.Records()) != len(in) {
		t.Fatalf("the job wrote %d records of %d", len(out.Records()), len(in))
	}
	_, body := scrape(t, h, "/metrics")
	fams := families(t, strings.NewReader(body))
	p0 := lbl("job", "double", "process", "0")
	if m := series(fams, "weir_records_read_total", p0); m == nil || value(m) != float64(len(in)) {
		t.Errorf("records read: %v, want %d", m, len(in))
	}
	// Count-cut epochs are numbered from 0 and every one ends at the
	// sink, so the last one completed is the count less one.
	epochs := job.Metrics().Epochs
	if m := series(fams, "weir_epoch", p0); epochs < 1 || m == nil || value(m) != float64(epochs-1) {
		t.Errorf("epoch: %v, want %d", m, epochs-1)
	}
	if m := series(fams, "weir_epoch_latency_seconds", p0); m == nil || m.Summary.GetSampleCount() != uint64(epochs) {
		t.Errorf("latency summary: %v, want %d epochs", m, epochs)
	}
}
