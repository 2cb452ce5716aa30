package weir_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

type benchRec struct {
	Ad   string
	Kind int
	TS   int64
}

func benchInput(n int) []benchRec {
	ads := make([]string, 1000)
	for i := range ads {
		ads[i] = fmt.Sprintf("ad-%04d", i)
	}
	v := make([]benchRec, n)
	for i := range v {
		v[i] = benchRec{Ad: ads[(i*7919)%len(ads)], Kind: i % 3, TS: int64(i / 100)}
	}
	return v
}

// benchPipeline runs Map -> Filter -> KeyBy -> Count over in, b.N times,
// and reports the records read per second.
func benchPipeline(b *testing.B, in []benchRec, workers int, spec weir.WindowSpec, timed bool) {
	b.ReportAllocs()
	var late int64
	for b.Loop() {
		job := weir.NewJob("bench", weir.Workers(workers), weir.BatchInterval(100*time.Millisecond))
		src := weir.Source(job, "src", weir.SliceSource[benchRec]{Records: in})
		if timed {
			src = weir.EventTime(src, func(r benchRec) int64 { return r.TS }, time.Second)
		}
		m := weir.Map(src, func(r benchRec) benchRec { r.Kind = (r.Kind + 1) % 3; return r }, weir.Stateless())
		f := weir.Filter(m, func(r benchRec) bool { return r.Kind != 0 }, weir.Stateless())
		counts := weir.Count(weir.Window(weir.KeyBy(f, func(r benchRec) string { return r.Ad }), spec))
		var n int64
		weir.Sink(counts, weir.SinkFunc[weir.WindowResult[string, int64]](func(v []weir.WindowResult[string, int64]) error {
			for _, r := range v {
				n += r.Value
			}
			return nil
		}))
		if err := job.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		late += job.Metrics().Late
		if want := int64(len(in)) * 2 / 3; n+late < want-1 || n+late > want+1 {
			b.Fatalf("counted %d records, want about %d", n, want)
		}
	}
	b.ReportMetric(float64(len(in))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkMapFilterKeyByCount(b *testing.B) {
	in := benchInput(1 << 20)
	for _, w := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("global/workers=%d", w), func(b *testing.B) {
			benchPipeline(b, in, w, weir.Global(), false)
		})
		b.Run(fmt.Sprintf("tumbling/workers=%d", w), func(b *testing.B) {
			benchPipeline(b, in, w, weir.Tumbling(time.Second), true)
		})
	}
}
