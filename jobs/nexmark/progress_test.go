package nexmark_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/nexmark"
)

// firstRow records how many events the source had read when the first
// result row came.
type firstRow struct {
	read *atomic.Int64
	at   atomic.Int64 // -1 until the first row
}

func (f *firstRow) Write(b []string) error {
	if len(b) > 0 {
		f.at.CompareAndSwap(-1, f.read.Load())
	}
	return nil
}

func (f *firstRow) Close() error { return nil }

// The queries with windows or timers emit results while their input is
// read, not only at its end: every source instance's watermark advances,
// whichever kinds of events it reads (at 2 workers one instance reads all
// the persons; at 5, one reads no auctions).
func TestQueriesEmitAsTheyGo(t *testing.T) {
	g := testGen(testEvents(t), 3)
	for _, name := range []string{"q4", "q5", "q7", "q8", "q9", "q11"} {
		for _, w := range []int{2, 5} {
			t.Run(fmt.Sprintf("%s/workers=%d", name, w), func(t *testing.T) {
				var read atomic.Int64
				first := &firstRow{read: &read}
				first.at.Store(-1)
				job := weir.NewJob("nexmark-"+name, weir.Workers(w), weir.EpochRecords(100))
				src := weir.FilterRef(weir.Source(job, "events", weir.Paced[gen.NexmarkEvent](g, 40_000)), func(*gen.NexmarkEvent) bool {
					read.Add(1)
					return true
				}, weir.Stateless())
				if err := nexmark.Add(name, src, nexmark.Sinks{CSV: first}); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := job.Run(ctx); err != nil {
					t.Fatal(err)
				}
				if at := first.at.Load(); at < 0 || at > g.Events*3/4 {
					t.Errorf("the first row came after %d of %d events", at, g.Events)
				}
			})
		}
	}
}
