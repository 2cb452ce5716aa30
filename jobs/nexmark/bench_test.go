package nexmark_test

import (
	"context"
	"flag"
	"syscall"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/nexmark"
)

// benchEvents is the number of events per run: at the default event-time
// rate (1 M events per second) they span several 10 s windows.
var benchEvents = flag.Int64("nexmark.events", 4_000_000, "events per benchmark run")

func benchGen() gen.Nexmark {
	return gen.Nexmark{Events: *benchEvents, Seed: 1, StartTime: startTime}
}

// cpuTime is the CPU time this process has used, in seconds: on a shared
// machine, events per CPU second are what a core of its own would do.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkQuery runs each query on the engine at 1 and 2 workers and the
// hand-written loop over the same generated events, reporting events/s
// (and per core, for the engine: events/s over workers), and events per
// CPU second of the whole process (generation included). Epochs are 100 ms
// long, as in `weir bench nexmark`. Each engine run
// checks its checksum against the loop's. Run interleaved with -count to
// see the noise of a shared machine:
//
//	go test ./jobs/nexmark -run '^$' -bench Query -benchtime 3x -count 5
func BenchmarkQuery(b *testing.B) {
	g := benchGen()
	for _, name := range nexmark.Names() {
		var want nexmark.Checksum
		b.Run(name+"/baseline", func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				sum, n, err := nexmark.Baseline(name, g)
				if err != nil || n != g.Events {
					b.Fatal(n, err)
				}
				want = sum
			}
			b.ReportMetric(float64(g.Events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(g.Events)*float64(b.N)/(cpuTime()-cpu), "events/cpu-s")
		})
		for _, w := range []int{1, 2} {
			b.Run(name+"/engine-w"+string(rune('0'+w)), func(b *testing.B) {
				cpu := cpuTime()
				for b.Loop() {
					job := weir.NewJob("nexmark-"+name, weir.Workers(w), weir.BatchInterval(100*time.Millisecond))
					var sum nexmark.Checksum
					if err := nexmark.Add(name, weir.Source(job, "events", g), nexmark.Sinks{Sum: &sum}); err != nil {
						b.Fatal(err)
					}
					if err := job.Run(context.Background()); err != nil {
						b.Fatal(err)
					}
					if want.Rows != 0 && !sum.Equal(&want) {
						b.Fatalf("engine checksum %v, the loop's %v", &sum, &want)
					}
				}
				rate := float64(g.Events) * float64(b.N) / b.Elapsed().Seconds()
				b.ReportMetric(rate, "events/s")
				b.ReportMetric(rate/float64(w), "events/s/core")
				b.ReportMetric(float64(g.Events)*float64(b.N)/(cpuTime()-cpu), "events/cpu-s")
			})
		}
	}
}
