package skew

import (
	"context"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// BenchmarkStrategies runs the skew query over the same 2 M Zipf 1.5 and
// uniform records under each partitioning strategy, with the job's default
// workers (GOMAXPROCS); compare the strategies' ns/op with benchstat.
func BenchmarkStrategies(b *testing.B) {
	for _, dist := range []string{"zipf", "uniform"} {
		recs, err := Generate(Config{Dist: dist, Events: 2_000_000})
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range []string{"hash", "roundrobin", "pkg", "prompt"} {
			b.Run(dist+"/"+s, func(b *testing.B) {
				b.SetBytes(int64(len(recs))) // "MB/s" reads as millions of records per second
				for b.Loop() {
					j := weir.NewJob("skew", weir.BatchInterval(100*time.Millisecond), weir.Partitioning(s))
					src := weir.Source(j, "records", weir.SliceSource[Record]{Records: recs})
					weir.Sink(Query(src, 0), &Collector{})
					if err := j.Run(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
