package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/nexmark"
)

// rescaleQueries are the queries weir bench rescale runs.
var rescaleQueries = []string{"q4", "q5", "q8"}

func benchRescaleCmd() *cobra.Command {
	b := rescaleBench{}
	cmd := &cobra.Command{
		Use:   "rescale",
		Short: "A Nexmark query at a fixed rate, rescaled once while it runs; prints one JSON line",
		Long: `Runs the Nexmark query --query over the built-in generator at --rate events
per second for --duration (the input is --rate x --duration events), with
--from instances of every operator, and at --at moves it to --to instances
by --strategy. Prints one JSON line:

  strategy, query, rate, duration_s, at_s, from, to, processes, events,
  state_mb, key_groups, latency_ms {before, during, after: {n, p50, p99, max}},
  migration_s, downtime_s, bytes_moved, bytes_whole, reuse, checkpoint,
  steady_heap_bytes, peak_heap_bytes, peak_heap_during_bytes,
  after_heap_bytes, checked

The input follows one schedule for the whole run (event n is due at the
start plus n / --rate), so input that arrives while the job is down waits
and is caught up. Epoch latencies (OnEpoch: from the epoch's cut at the
sources to its end at the last sink) are split by when the epoch
completed: before the rescale was asked for, during (from the request to
the first epoch completed after the move, both included) and after. For
restart, during also holds the downtime (from the stopped job's end to
the restarted job's first epoch), which the input due meanwhile waited
at least, and which no epoch's latency shows. migration_s is from the
request to that first epoch after the move; bytes_moved is the state read
back (for restart, the checkpoint's files) and bytes_whole what it would
have taken whole: a live strategy with checkpoints (--checkpoint-every
above 0) reuses them by default (reuse: true), handing a key group to an
instance of another process (--processes) as a delta on its blob in the
newest complete checkpoint (the keys new or changed since, those gone)
when that is smaller, which the new owner merges with the blob it reads
from the checkpoint (within a process key groups go whole, in memory);
--reuse=false hands every key group over whole. The heap is runtime/metrics'
` + heapObjectsMetric + ` every 10 ms: steady_heap_bytes is its
largest value over the second half of the time before the request,
peak_heap_bytes over the whole run, peak_heap_during_bytes over the
migration, after_heap_bytes over the time after it (the state is as large
as before, spread over the new owners; the live heap is read at the last
collection, so while state grows without one, steady_heap_bytes lags
behind it and after_heap_bytes is the steady state to compare with).
checked is true when the query's result over the whole run
has the checksum of nexmark.Baseline over the same events (a run without
any rescale); otherwise the line is printed and the command fails.

The queries' own state is small and bounded, so --state-mb adds keyed
state beside the query (a keyed Process holding padding for a set of
keys, filled by the auctions by the middle of the time before the
rescale, emitting nothing) that the rescale moves with the rest. With no
flags the run is the one the migration figures are quoted for: q8 with
1 GiB of it (--state-mb 1024) in one process, 2 -> 4 instances, batched,
without periodic checkpoints (--checkpoint-every: 0 for the live
strategies, 100 for restart, unless given); a larger --state-mb wants
--rate and --at large enough for it to build up, and memory to hold it
twice.

Strategies: restart (stop cleanly at a checkpoint, start again from it
with --to instances, as Flink does), and the live migrations batched (the
default), all-at-once and fluid (Job.Rescale on the running job, which
runs max(--from, --to) instances from the start, its keyed operators over
--from of them; --gap and --per-pair shape the steps).

--processes N runs N processes of the job inside this process, joined by
in-process networks, each with max(--from, --to) / N instances of every
operator; the keyed operators start over the first --from instances
(process 0's first), so --from 2 --to 4 --processes 2 has process 1 take
key groups (as a process that joins) and --from 4 --to 2 has it hand all
of them back (as one that leaves). For restart, --from and --to must
both be multiples of N (the stopped job runs --from / N instances per
process, the restarted one --to / N). The query's sinks run on process 0.

  weir bench rescale
  weir bench rescale --query q4 --state-mb 256 --rate 50000 --duration 40s --at 20s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			b.reuseSet = cmd.Flags().Changed("reuse")
			b.toSet = cmd.Flags().Changed("to")
			if !cmd.Flags().Changed("checkpoint-every") && b.strategy == "restart" {
				b.every = 100 // restart goes through a checkpoint
			}
			if err := b.check(); err != nil {
				return err
			}
			return b.run(cmd.Context())
		},
	}
	b.flags(cmd.Flags())
	return cmd
}

// flags defines the command's flags on f.
func (b *rescaleBench) flags(f *pflag.FlagSet) {
	f.StringVar(&b.strategy, "strategy", "batched", "how to rescale: batched, all-at-once, fluid (live) or restart (stop at a checkpoint and start again from it)")
	f.IntVar(&b.gap, "gap", 1, "epochs between two steps of a live rescale")
	f.IntVar(&b.perPair, "per-pair", 1, "key groups one step of batched hands between the same two instances")
	f.StringVar(&b.query, "query", "q8", "the query: "+strings.Join(rescaleQueries, ", "))
	f.Float64Var(&b.rate, "rate", 20000, "events per second, below the job's saturation")
	f.DurationVar(&b.duration, "duration", 20*time.Second, "how long the input lasts (its events: --rate x --duration)")
	f.DurationVar(&b.at, "at", 6*time.Second, "when the rescale is asked for, from the start")
	f.IntVar(&b.from, "from", 2, "instances of every operator before the rescale (over all processes)")
	f.IntVar(&b.to, "to", 4, "instances of every operator after the rescale (over all processes)")
	f.IntVar(&b.stateMB, "state-mb", 1024, "MiB of keyed state added beside the query (0: the query's own only)")
	f.IntVar(&b.keyGroups, "key-groups", 128, "number of key groups (the unit a rescale moves)")
	f.IntVar(&b.processes, "processes", 1, "processes of the job, inside this process over in-process networks")
	f.BoolVar(&b.join, "join", false, "live strategies: at --at a process joins the job of --processes (in one slot more), the key groups and shares spreading onto its instances (--from over the --processes before, as many more after), instead of a rescale to --to")
	f.IntVar(&b.leave, "leave", 0, "live strategies: at --at process `P` (1 to --processes - 1) leaves the job, its key groups and shares moving to the others' --from instances, instead of a rescale to --to")
	f.DurationVar(&b.interval, "interval", 100*time.Millisecond, "epoch length")
	f.IntVar(&b.every, "checkpoint-every", 0, "epochs between checkpoints (0: none, for the live strategies; restart takes 100 unless given)")
	f.StringVar(&b.ckptDir, "checkpoint-dir", "", "where checkpoints go (default: a temporary directory, removed at the end)")
	f.BoolVar(&b.reuse, "reuse", true, "live strategies: hand key groups over as deltas on the newest complete checkpoint when smaller (needs --checkpoint-every above 0)")
	f.Uint64Var(&b.seed, "seed", 1, "the generator's seed")
	f.StringVar(&b.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to `FILE`")
}

// rescaleBench is one weir bench rescale.
type rescaleBench struct {
	strategy, query, ckptDir string
	cpuProfile               string
	rate                     float64
	duration, at, interval   time.Duration
	from, to, stateMB        int
	keyGroups                int
	processes, every         int
	gap, perPair             int
	seed                     uint64
	// reuse is --reuse; reuseSet says it was given.
	reuse, reuseSet bool
	// leave is --leave (0: none), join --join; toSet says --to was
	// given.
	leave int
	join  bool
	toSet bool
}

func (b *rescaleBench) check() error {
	if b.leave != 0 {
		if err := b.checkLeave(); err != nil {
			return err
		}
	}
	if b.join {
		if err := b.checkJoin(); err != nil {
			return err
		}
	}
	switch {
	case strategies[b.strategy] == nil:
		return fmt.Errorf("--strategy %q: want batched, all-at-once, fluid or restart", b.strategy)
	case b.gap < 1:
		return fmt.Errorf("--gap %d: must be at least 1 epoch", b.gap)
	case b.perPair < 1:
		return fmt.Errorf("--per-pair %d: must be at least 1", b.perPair)
	case !slices.Contains(rescaleQueries, b.query):
		return fmt.Errorf("--query %q: want one of %s", b.query, strings.Join(rescaleQueries, ", "))
	case !(b.rate >= 1) || b.rate > 1e8:
		return fmt.Errorf("--rate %v: want events per second from 1 to 1e8", b.rate)
	case b.duration <= 0:
		return fmt.Errorf("--duration %v: must be positive", b.duration)
	case b.at <= 0 || b.at >= b.duration:
		return fmt.Errorf("--at %v: must be after the start and before --duration %v", b.at, b.duration)
	case b.processes < 1:
		return fmt.Errorf("--processes %d: must be at least 1", b.processes)
	case b.strategy != "restart" && max(b.from, b.to)%b.processes != 0:
		return fmt.Errorf("--from %d, --to %d: the larger must be a multiple of --processes %d (every process runs as many instances)", b.from, b.to, b.processes)
	case b.from < 1 || b.to < 1:
		return fmt.Errorf("--from %d --to %d: must be at least 1", b.from, b.to)
	case b.from == b.to && b.leave == 0 && !b.join:
		return fmt.Errorf("--from and --to are both %d: a rescale changes the instance count", b.from)
	case b.strategy == "restart" && (b.from%b.processes != 0 || b.to%b.processes != 0):
		return fmt.Errorf("--from %d and --to %d must be multiples of --processes %d", b.from, b.to, b.processes)
	case b.stateMB < 0:
		return fmt.Errorf("--state-mb %d: must be at least 0", b.stateMB)
	case b.keyGroups < max(b.from, b.to) || b.keyGroups > 1<<15:
		return fmt.Errorf("--key-groups %d: must be from the larger of --from and --to (%d) to %d", b.keyGroups, max(b.from, b.to), 1<<15)
	case b.interval <= 0:
		return fmt.Errorf("--interval %v: must be positive", b.interval)
	case b.every < 0 || (b.every == 0 && b.strategy == "restart"):
		return fmt.Errorf("--checkpoint-every %d: must be at least 1 (0, no checkpoints, only for the live strategies: restart goes through one)", b.every)
	case b.reuseSet && b.strategy == "restart":
		return fmt.Errorf("--reuse: restart reads the whole checkpoint back; checkpoint reuse is for the live strategies")
	case b.reuseSet && b.reuse && b.every == 0:
		return fmt.Errorf("--reuse with --checkpoint-every 0: checkpoint reuse needs checkpoints")
	}
	if b.stateMB > 0 && b.ballast().Keys < 1 {
		return fmt.Errorf("--state-mb %d: no auction comes before the middle of --at %v at --rate %v; raise them", b.stateMB, b.at, b.rate)
	}
	return nil
}

// checkJoin checks the flags of a run in which a process joins; the job
// then runs --from instances over --processes before, and as many more
// after.
func (b *rescaleBench) checkJoin() error {
	switch {
	case b.strategy == "restart":
		return fmt.Errorf("--join with --strategy restart: a process joins a running job; use a live strategy")
	case b.leave != 0:
		return fmt.Errorf("--join with --leave: one at a time")
	case b.toSet:
		return fmt.Errorf("--join with --to: the joining process brings its own instances; give --from alone")
	case b.from%b.processes != 0:
		return fmt.Errorf("--from %d: must be a multiple of --processes %d", b.from, b.processes)
	}
	b.to = b.from / b.processes * (b.processes + 1)
	return nil
}

// checkLeave checks the flags of a run in which a process leaves; the
// job then runs --from instances before and after (--to is --from).
func (b *rescaleBench) checkLeave() error {
	switch {
	case b.strategy == "restart":
		return fmt.Errorf("--leave with --strategy restart: a process leaves a running job; use a live strategy")
	case b.processes < 2 || b.leave < 1 || b.leave >= b.processes:
		return fmt.Errorf("--leave %d: want a process from 1 to %d of the job's --processes %d (process 0 stays)", b.leave, b.processes-1, b.processes)
	case b.toSet:
		return fmt.Errorf("--leave with --to: the processes that stay keep their instances; give --from alone")
	}
	b.to = b.from
	return nil
}

// events is the number of events of the run's input.
func (b *rescaleBench) events() int64 { return int64(b.rate * b.duration.Seconds()) }

// generator is the run's input, unpaced (the clock paces it) with event
// times that advance at --rate from a fixed start, as the wall clock
// would: the same events every run, for the check.
func (b *rescaleBench) generator() gen.Nexmark {
	return gen.Nexmark{Events: b.events(), Seed: b.seed, StartTime: 1_700_000_000_000, EventTimeRate: b.rate}
}

// ballast sizes the added state: one key per auction of the first half
// of the time before the rescale (3 in 50 events are auctions), at most
// 2^20 keys, padded to --state-mb in all.
func (b *rescaleBench) ballast() ballast {
	if b.stateMB == 0 {
		return ballast{}
	}
	keys := min(int64(b.rate*b.at.Seconds()/2*3/50), 1<<20)
	if keys < 1 {
		return ballast{}
	}
	return ballast{Keys: keys, Pad: int(max(1, int64(b.stateMB)<<20/keys))}
}

// rescaleRun is the state of one benchmark run that a strategy uses.
type rescaleRun struct {
	*rescaleBench
	clock   *clock
	log     *epochLog
	ckptDir string
}

// build makes a job of the run with instances instances in all, with
// checkpoints in the run's directory, its epochs logged and opts; first
// goes to process 0 alone (one process asked to stop stops them all).
func (r *rescaleRun) build(instances int, opts []weir.JobOption, first ...weir.JobOption) (*rescaleJob, error) {
	src := scheduled[gen.NexmarkEvent]{in: r.generator(), c: r.clock}
	common := []weir.JobOption{weir.BatchInterval(r.interval), weir.Logger(quietLogger()), weir.KeyGroups(r.keyGroups)}
	if r.every > 0 {
		common = append(common, weir.Checkpoints(r.ckptDir, r.every, 2))
	}
	common = append(common, opts...)
	if r.join {
		// One slot more than --processes, which start the job.
		return newRescaleJob(r.query, src, r.ballast(), r.processes+1, instances/(r.processes+1), common, append(first, r.log.option()), r.processes)
	}
	return newRescaleJob(r.query, src, r.ballast(), r.processes, instances/r.processes, common, append(first, r.log.option()), 0)
}

func (b *rescaleBench) run(ctx context.Context) error {
	want, n, err := nexmark.Baseline(b.query, b.generator())
	if err != nil {
		return err
	}
	if n != b.events() {
		return fmt.Errorf("bench rescale: the reference read %d events of %d", n, b.events())
	}
	r := &rescaleRun{rescaleBench: b, log: &epochLog{}, ckptDir: b.ckptDir}
	if r.ckptDir == "" {
		if r.ckptDir, err = os.MkdirTemp("", "weir-rescale-"); err != nil {
			return err
		}
		defer os.RemoveAll(r.ckptDir)
	}
	sctx, stop := context.WithCancel(ctx)
	heap := sampleHeap(sctx, 10*time.Millisecond)
	stopProfile, err := startCPUProfile(b.cpuProfile)
	if err != nil {
		stop()
		return err
	}
	r.clock = steadyClock(b.rate)
	got, m, err := strategies[b.strategy](ctx, r)
	stop()
	if perr := stopProfile(); err == nil {
		err = perr
	}
	samples := <-heap
	if err != nil {
		return err
	}
	line := b.line(r, m, samples)
	line["checked"] = got.Equal(&want)
	if err := json.NewEncoder(os.Stdout).Encode(line); err != nil {
		return err
	}
	if !got.Equal(&want) {
		return fmt.Errorf("bench rescale: the result (%s) differs from a run without rescale (%s)", got.String(), want.String())
	}
	return nil
}

// line is the JSON line of a run, without checked.
func (b *rescaleBench) line(r *rescaleRun, m migration, heap []heapSample) map[string]any {
	before, during, after := r.log.split(m.requested, m.done)
	return map[string]any{
		"strategy": b.strategy, "query": b.query, "rate": b.rate,
		"duration_s": b.duration.Seconds(), "at_s": b.at.Seconds(),
		"from": b.from, "to": b.to, "processes": b.processes, "leave": b.leave, "join": b.join, "events": b.events(), "state_mb": b.stateMB, "key_groups": b.keyGroups,
		"latency_ms": map[string]any{
			"before": latencySummary(before), "during": latencySummary(during), "after": latencySummary(after),
		},
		"migration_s": m.done.Sub(m.requested).Seconds(), "downtime_s": m.downtime.Seconds(),
		"bytes_moved": m.bytesMoved, "bytes_whole": m.bytesWhole, "reuse": b.reuses(), "checkpoint": m.checkpoint, "steps": m.steps,
		"steady_heap_bytes":      maxHeap(heap, r.clock.start.Add(b.at/2), m.requested),
		"peak_heap_bytes":        maxHeap(heap, time.Time{}, time.Time{}),
		"peak_heap_during_bytes": maxHeap(heap, m.requested, m.done.Add(time.Nanosecond)),
		"after_heap_bytes":       maxHeap(heap, m.done.Add(time.Nanosecond), time.Time{}),
	}
}

// reuses says whether the run reuses checkpoints: a live strategy with
// checkpoints and --reuse.
func (b *rescaleBench) reuses() bool { return b.reuse && b.every > 0 && b.strategy != "restart" }

// quietLogger logs the jobs' warnings and errors to standard error, not
// what they decide as they go (a restart taking the directory over).
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
