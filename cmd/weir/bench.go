package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/ysb"
)

func benchYSBCmd() *cobra.Command {
	var (
		jf         jobFlags
		events     int
		runs       int
		procs      int
		baseline   bool
		cpuProfile string
	)
	cmd := &cobra.Command{
		Use:   "ysb",
		Short: "YSB over events generated in memory beforehand; prints one JSON object",
		Long: `Generates --events YSB events in memory (not timed), then runs the YSB query
over them --runs times and reports the median run. GOMAXPROCS is set to
--workers unless --procs says otherwise, so "1 worker" means one core.
With --baseline it also times a hand-written single-threaded loop doing the
same query on the same events, interleaved with the engine's runs, and
reports the ratio. Every run's output is checked against the loop's.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if events <= 0 {
				return fmt.Errorf("--events must be positive")
			}
			if procs <= 0 {
				procs = jf.workers
			}
			runtime.GOMAXPROCS(procs)
			evs, ads := gen.YSBEvents(events, 1)
			camp := ysb.FromAds(ads)
			want := ysb.Reference(evs, camp)
			runtime.GC()
			stopProfile, err := startCPUProfile(cpuProfile)
			if err != nil {
				return err
			}
			defer stopProfile()
			var engine, loop []float64
			var p50s, p99s, wire []float64
			var epochs int64
			for r := 0; r < max(1, runs); r++ {
				if baseline {
					runtime.GC()
					b := ysb.NewBaseline(camp)
					t0 := time.Now()
					b.Run(evs)
					loop = append(loop, time.Since(t0).Seconds())
					if got := b.Results(); !slices.Equal(got, want) {
						return fmt.Errorf("baseline loop disagrees with the reference computation")
					}
				}
				runtime.GC()
				run := jf
				if jf.ckptDir != "" {
					// Each run checkpoints afresh, rather than resuming the last.
					run.ckptDir = filepath.Join(jf.ckptDir, fmt.Sprintf("run-%d", r))
					if err := os.RemoveAll(run.ckptDir); err != nil {
						return err
					}
				}
				job := weir.NewJob("ysb-bench", run.options()...)
				col := &ysb.Collector{}
				src := weir.Source(job, "events", weir.SliceSource[gen.YSBEvent]{Records: evs})
				weir.Sink(ysb.Query(src, camp, 5*time.Second), col, weir.Name("collect"))
				t0 := time.Now()
				if err := run.observe.run(cmd.Context(), job); err != nil {
					return err
				}
				took := time.Since(t0)
				if jf.cluster.resolved.Processes() > 1 {
					took = job.Metrics().Elapsed // not the wait for the other processes to connect
				}
				engine = append(engine, took.Seconds())
				if !jf.cluster.leader() {
					continue
				}
				if got := col.Sorted(); !slices.Equal(got, want) {
					return fmt.Errorf("engine output (%d windows) disagrees with the reference (%d windows)", len(got), len(want))
				}
				m := job.Metrics()
				wire = append(wire, float64(m.WireBytes))
				p50s = append(p50s, ms(m.LatencyP50))
				p99s = append(p99s, ms(m.LatencyP99))
				epochs = m.Epochs
			}
			if !jf.cluster.leader() {
				return nil // process 0 prints the job's summary
			}
			secs := median(engine)
			out := map[string]any{
				"job":            "ysb",
				"events":         events,
				"seconds":        secs,
				"events_per_s":   float64(events) / secs,
				"workers":        jf.workers,
				"processes":      max(1, jf.cluster.resolved.Processes()),
				"gomaxprocs":     procs,
				"runs":           len(engine),
				"epochs":         epochs,
				"latency_p50_ms": median(p50s),
				"latency_p99_ms": median(p99s),
				"checked":        true,
			}
			if n := jf.cluster.resolved.Processes(); n > 1 {
				// Process 0 knows what it sent; the processes read equal
				// shares of the events and send alike, so the job sends
				// about n times as much.
				out["wire_bytes_sent_process0"] = median(wire)
				out["wire_bytes_per_event"] = median(wire) * float64(n) / float64(events)
			}
			if baseline {
				bs := median(loop)
				out["baseline_events_per_s"] = float64(events) / bs
				out["ratio_to_baseline"] = bs / secs
			}
			enc := json.NewEncoder(os.Stdout)
			return enc.Encode(out)
		},
	}
	jf.register(cmd.Flags())
	cmd.Flags().Lookup("interval").DefValue = "100ms"
	jf.interval = 100 * time.Millisecond
	cmd.Flags().IntVar(&events, "events", 10_000_000, "number of events")
	cmd.Flags().IntVar(&runs, "runs", 1, "timed runs; the median is reported")
	cmd.Flags().IntVar(&procs, "procs", 0, "GOMAXPROCS (default: --workers)")
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the runs to `FILE`")
	cmd.Flags().BoolVar(&baseline, "baseline", false, "also time the single-threaded loop and report the ratio")
	return cmd
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
