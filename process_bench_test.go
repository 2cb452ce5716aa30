package weir_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// BenchmarkKeyedProcess counts records per key and 1 s of event time with
// KeyedProcess timers (a window by hand), next to Process keeping a plain
// per-key count, and reports the records read per second.
func BenchmarkKeyedProcess(b *testing.B) {
	in := benchInput(1 << 20)
	type win struct {
		End int64
		N   int64
	}
	type ctx = weir.ProcessContext[string, win, int64]
	for _, w := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("timers/workers=%d", w), func(b *testing.B) {
			benchProcess(b, in, w, func(k weir.KeyedStream[string, benchRec]) weir.Stream[int64] {
				return weir.KeyedProcess(k, weir.ProcessFunc[string, benchRec, win, int64]{
					OnRecord: func(c *ctx, r benchRec) {
						s := c.State()
						s.End = (r.TS/1000 + 1) * 1000
						s.N++
						c.RegisterEventTimer(s.End - 1)
					},
					OnTimer: func(c *ctx, t weir.Timer) {
						c.Emit(c.State().N)
						c.ClearState()
					},
				})
			})
		})
		b.Run(fmt.Sprintf("process/workers=%d", w), func(b *testing.B) {
			benchProcess(b, in, w, func(k weir.KeyedStream[string, benchRec]) weir.Stream[int64] {
				return weir.Process(k, func(_ string, n *int64, r benchRec, out []int64) []int64 {
					if *n++; *n%1000 == 0 {
						out = append(out, *n)
					}
					return out
				})
			})
		})
	}
}

func benchProcess(b *testing.B, in []benchRec, workers int, op func(weir.KeyedStream[string, benchRec]) weir.Stream[int64]) {
	b.ReportAllocs()
	for b.Loop() {
		job := weir.NewJob("bench", weir.Workers(workers), weir.BatchInterval(100*time.Millisecond))
		src := weir.EventTime(weir.Source(job, "src", weir.SliceSource[benchRec]{Records: in}), func(r benchRec) int64 { return r.TS }, time.Second)
		var n int64
		weir.Sink(op(weir.KeyBy(src, func(r benchRec) string { return r.Ad })), weir.SinkFunc[int64](func(v []int64) error {
			n += int64(len(v))
			return nil
		}))
		if err := job.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			b.Fatal("no output")
		}
	}
	b.ReportMetric(float64(len(in))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
