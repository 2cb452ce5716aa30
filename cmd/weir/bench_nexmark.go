package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/nexmark"
)

func benchNexmarkCmd() *cobra.Command {
	var b nexmarkBench
	var events string
	cmd := &cobra.Command{
		Use:   "nexmark",
		Short: "Nexmark queries over the built-in generator; prints one JSON line per query",
		Long: `Runs the Nexmark query --query (` + strings.Join(nexmark.Names(), ", ") + `, or all for
each in turn) over --events events of the built-in generator, unpaced,
with synthetic event times (--event-rate, --start-time, --seed), --runs
times, and prints one JSON line per query with the median run:

  query, events, workers, processes, gomaxprocs, runs, seconds,
  events_per_s, events_per_s_per_core, checked, latency_p50_ms, latency_p99_ms

Generating the events is part of the timed work, as it is for the loop
below. GOMAXPROCS is set to --workers unless --procs says otherwise, and
events_per_s_per_core = events_per_s / (min(--workers, GOMAXPROCS) x
processes): the rate per core the job may use.

checked is true when every run's result has the checksum (rows and a sum
of row hashes; for q4 the last row per category) of a hand-written
single-threaded loop's result over the same events (nexmark.Baseline,
run once per query for this even without --baseline); otherwise the
line is printed with checked false and the command fails.
With --baseline the loop is timed too, its runs interleaved with the
engine's, adding baseline_events_per_s (its median) and ratio =
events_per_s / baseline_events_per_s: at --workers 1, how the engine's
cost per event compares with the loop's.

On a machine shared with other work, wall-clock rates fall with the
share of the cores the run gets; the process's CPU time does not:
cpu_seconds (of the engine's run, every thread of the process, generation
included; in a distributed job process 0's, for its share of the
events), events_per_cpu_s, and with --baseline baseline_events_per_cpu_s
and cpu_ratio = events_per_cpu_s / baseline_events_per_cpu_s.

  weir bench nexmark --query all --workers 2 --baseline
  weir launch -n 2 -- bench nexmark --query q5 --workers 1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkNexmarkQuery(b.query, true); err != nil {
				return err
			}
			n, isNum, err := parseCount("events", events, "events")
			switch {
			case err != nil:
				return err
			case !isNum || n == 0:
				return fmt.Errorf("--events %s: want a positive number of events", events)
			case b.runs < 1:
				return fmt.Errorf("--runs %d: must be at least 1", b.runs)
			case b.procs < 0:
				return fmt.Errorf("--procs %d: must be at least 1 (0: --workers)", b.procs)
			case b.gf.startTime == 0:
				return fmt.Errorf("--start-time 0: the wall clock would differ between the engine's runs and the loop's; give a time")
			}
			if err := b.gf.check(n); err != nil {
				return err
			}
			b.events = n
			return b.run(cmd.Context())
		},
	}
	b.jf.register(cmd.Flags())
	b.gf.register(cmd.Flags())
	cmd.Flags().Lookup("interval").DefValue = "100ms"
	b.jf.interval = 100 * time.Millisecond
	cmd.Flags().StringVar(&b.query, "query", "", "the query: "+strings.Join(nexmark.Names(), ", ")+", or all")
	cmd.Flags().StringVar(&events, "events", "10000000", "number of events per run")
	cmd.Flags().IntVar(&b.runs, "runs", 1, "timed runs per query; the median is reported")
	cmd.Flags().IntVar(&b.procs, "procs", 0, "GOMAXPROCS (default: --workers)")
	cmd.Flags().BoolVar(&b.baseline, "baseline", false, "also time the single-threaded loop and report the ratio")
	cmd.Flags().StringVar(&b.cpuProfile, "cpuprofile", "", "write a CPU profile of each query's runs (the loop's too, with --baseline) to `FILE` (FILE.qN with --query all)")
	return cmd
}

// nexmarkBench is one weir bench nexmark.
type nexmarkBench struct {
	jf         jobFlags
	gf         nexmarkGenFlags
	query      string
	events     int64
	runs       int
	procs      int
	baseline   bool
	cpuProfile string
}

func (b *nexmarkBench) run(ctx context.Context) error {
	if b.procs <= 0 {
		b.procs = b.jf.workers
	}
	runtime.GOMAXPROCS(b.procs)
	queries := []string{b.query}
	if b.query == "all" {
		queries = nexmark.Names()
	}
	bar := newProgressBar(os.Stderr)
	failed := 0
	for _, q := range queries {
		stop, err := b.profile(q)
		if err != nil {
			return err
		}
		line, err := b.query1(ctx, q, bar)
		if err := errors.Join(err, stop()); err != nil {
			return err
		}
		if line == nil {
			continue // not process 0
		}
		if err := json.NewEncoder(os.Stdout).Encode(line); err != nil {
			return err
		}
		if line["checked"] != true {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("bench nexmark: the engine's result differs from the loop's in %d of %d queries", failed, len(queries))
	}
	return nil
}

// query1 benchmarks query q and returns its line (nil on processes other
// than 0).
// profile starts the CPU profile of query q's runs, on process 0, and
// returns what stops it.
func (b *nexmarkBench) profile(q string) (stop func() error, err error) {
	if b.cpuProfile == "" || !b.jf.cluster.leader() {
		return func() error { return nil }, nil
	}
	path := b.cpuProfile
	if b.query == "all" {
		path += "." + q
	}
	return startCPUProfile(path)
}

func (b *nexmarkBench) query1(ctx context.Context, q string, bar *progressBar) (map[string]any, error) {
	g := b.gf.gen(b.events, 0)
	var engine, loop, engineCPU, loopCPU, p50s, p99s []float64
	checked := true
	var want nexmark.Checksum
	for r := range b.runs {
		// The loop runs on every process, so that the processes start
		// each job together; with --baseline it is timed every run.
		if r == 0 || b.baseline {
			runtime.GC()
			t0, cpu0 := time.Now(), cpuSeconds()
			sum, n, err := nexmark.Baseline(q, g)
			if err != nil {
				return nil, err
			}
			loop, loopCPU = append(loop, time.Since(t0).Seconds()), append(loopCPU, cpuSeconds()-cpu0)
			if n != b.events {
				return nil, fmt.Errorf("bench nexmark: the loop read %d events of %d", n, b.events)
			}
			want = sum
		}
		runtime.GC()
		cpu0 := cpuSeconds()
		got, m, took, err := b.engineRun(ctx, q, r, g, bar)
		if err != nil {
			return nil, err
		}
		engine, engineCPU = append(engine, took.Seconds()), append(engineCPU, cpuSeconds()-cpu0)
		p50s, p99s = append(p50s, ms(m.LatencyP50)), append(p99s, ms(m.LatencyP99))
		checked = checked && got.Equal(&want)
	}
	if !b.jf.cluster.leader() {
		return nil, nil
	}
	procs := max(1, b.jf.cluster.resolved.Processes())
	secs := median(engine)
	rate := float64(b.events) / secs
	line := map[string]any{
		"query": q, "events": b.events, "workers": b.jf.workers, "processes": procs, "gomaxprocs": b.procs,
		"runs": len(engine), "seconds": secs, "events_per_s": rate,
		"events_per_s_per_core": rate / float64(min(b.jf.workers, b.procs)*procs),
		"checked":               checked,
		"latency_p50_ms":        median(p50s), "latency_p99_ms": median(p99s),
	}
	// This process's CPU time covers its share of the events.
	cpuRate := float64(b.events) / float64(procs) / median(engineCPU)
	if median(engineCPU) > 0 {
		line["cpu_seconds"], line["events_per_cpu_s"] = median(engineCPU), cpuRate
	}
	if b.baseline {
		base := float64(b.events) / median(loop)
		line["baseline_events_per_s"] = base
		line["ratio"] = rate / base
		if median(loopCPU) > 0 && median(engineCPU) > 0 {
			baseCPU := float64(b.events) / median(loopCPU)
			line["baseline_events_per_cpu_s"], line["cpu_ratio"] = baseCPU, cpuRate/baseCPU
		}
	}
	return line, nil
}

// engineRun runs query q over g once and returns the checksum of its
// result (on process 0), its metrics and how long it took.
func (b *nexmarkBench) engineRun(ctx context.Context, q string, r int, g gen.Nexmark, bar *progressBar) (nexmark.Checksum, weir.Metrics, time.Duration, error) {
	jf := b.jf
	if jf.ckptDir != "" {
		// Each run checkpoints afresh, rather than resuming the last.
		jf.ckptDir = filepath.Join(b.jf.ckptDir, fmt.Sprintf("%s-run-%d", q, r))
		if err := os.RemoveAll(jf.ckptDir); err != nil {
			return nexmark.Checksum{}, weir.Metrics{}, 0, err
		}
	}
	job := weir.NewJob("nexmark-bench-"+q, append(jf.options(), weir.OnEpoch(bar.epoch))...)
	var sum nexmark.Checksum
	if err := nexmark.Add(q, weir.Source(job, "events", g), nexmark.Sinks{Sum: &sum}); err != nil {
		return sum, weir.Metrics{}, 0, err
	}
	procs := max(1, jf.cluster.resolved.Processes())
	bar.begin(q, b.events/int64(procs))
	t0 := time.Now()
	err := jf.observe.run(ctx, job)
	took := time.Since(t0)
	bar.end()
	m := job.Metrics()
	if procs > 1 {
		took = m.Elapsed // not the wait for the other processes to connect
	}
	return sum, m, took, err
}
