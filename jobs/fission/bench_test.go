package fission_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/jobs/fission"
)

// BenchmarkFission runs the CPU-heavy stateless region at 1 and 2 workers
// (GOMAXPROCS set to match), unordered and ordered. Compare records/s
// within one run: the 2-worker speedup and the ordered cost.
func BenchmarkFission(b *testing.B) {
	recs := fission.Generate(200_000, 1000)
	c := fission.Config{Rounds: 500}
	for _, w := range []int{1, 2} {
		for _, ordered := range []bool{false, true} {
			b.Run(fmt.Sprintf("workers=%d/ordered=%v", w, ordered), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(w))
				opts := []weir.JobOption{weir.Workers(w)}
				if ordered {
					opts = append(opts, weir.Ordered())
				}
				for b.Loop() {
					run(b, recs, c, opts...)
				}
				b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			})
		}
	}
}
