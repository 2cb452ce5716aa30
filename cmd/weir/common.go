package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/pebblestate"
)

// jobFlags are the flags every job takes.
type jobFlags struct {
	workers      int
	interval     time.Duration
	epochRecords int
	keyGroups    int
	active       int
	partitioning partitioning
	ordered      bool
	cluster      clusterFlags
	observe      observeFlags
	fs           *pflag.FlagSet
	ckptDir      string
	ckptEvery    int
	ckptInterval time.Duration
	ckptKeep     int
	fromCkpt     string
	state        string
	stateDir     string
	trace        string
	// stopOn, once closed, stops the job cleanly (jobSignals); leaveOn,
	// with --elastic, makes this process leave it instead.
	stopOn  <-chan struct{}
	elastic bool
	leaveOn <-chan struct{}
	// autoscale is --autoscale, with --max-workers and
	// --target-utilization.
	autoscale  bool
	maxWorkers int
	targetUtil float64
}

func (f *jobFlags) register(fs *pflag.FlagSet) {
	f.fs = fs
	registered = append(registered, f)
	f.cluster.register(fs)
	f.observe.register(fs)
	fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "parallelism of every operator")
	fs.DurationVar(&f.interval, "interval", time.Second, "epoch (batch) interval")
	fs.IntVar(&f.epochRecords, "epoch-records", 0, "cut epochs every N records per source instance instead of by time")
	fs.IntVar(&f.keyGroups, "key-groups", 128, "number of key groups")
	fs.IntVar(&f.active, "active-instances", 0, "start the keyed operators with their key groups over their first `N` instances only (of --workers x processes; weir rescale gives the others key groups while the job runs; default all)")
	f.partitioning.name = "auto"
	fs.Var(&f.partitioning, "partitioning", "how keyed aggregations partition each epoch: "+f.partitioning.choices())
	fs.BoolVar(&f.ordered, "ordered", false, "keep the input order through every parallel region (one source instance)")
	fs.StringVar(&f.ckptDir, "checkpoint-dir", "", "take checkpoints in `DIR` (shared by the job's processes) and resume from the latest")
	fs.IntVar(&f.ckptEvery, "checkpoint-every", 0, "epochs between checkpoints (default: --checkpoint-interval's worth, else 10)")
	fs.DurationVar(&f.ckptInterval, "checkpoint-interval", 0, "time between checkpoints, in whole epochs of --interval")
	fs.IntVar(&f.ckptKeep, "checkpoint-keep", 3, "complete checkpoints to keep")
	fs.StringVar(&f.state, "state", "memory", "where keyed state lives: memory, or pebble (on disk, under --state-dir)")
	fs.StringVar(&f.stateDir, "state-dir", "weir-state", "directory of the pebble state")
	fs.StringVar(&f.trace, "trace", "", "record the workers' activities to `FILE` (FILE.process-I in a distributed job) for weir trace analyze")
	fs.BoolVar(&f.elastic, "elastic", false, "a distributed job whose processes may leave: SIGTERM (or SIGINT) makes this process hand its key groups to the others and exit 0 while they run on, instead of stopping the whole job")
	fs.BoolVar(&f.autoscale, "autoscale", false, "size the keyed operators by themselves while the job runs (DS2 over their true rates), from --workers up to --max-workers per process; every process of the job decides alike, with no master")
	fs.IntVar(&f.maxWorkers, "max-workers", 0, "with --autoscale, the most instances per process the keyed operators may grow to (default --workers)")
	fs.Float64Var(&f.targetUtil, "target-utilization", 0.8, "with --autoscale, the share of an instance's true rate the sizing plans for (0.2 to 1)")
	fs.StringVar(&f.fromCkpt, "from-checkpoint", "", "start from the checkpoint in `DIR` (a chk-N directory), even one taken with other --workers or processes")
}

// options are the job options of the flags, once check has passed them.
func (f *jobFlags) options() []weir.JobOption {
	opts := []weir.JobOption{weir.Workers(f.workers), weir.BatchInterval(f.interval), weir.KeyGroups(f.keyGroups)}
	if f.autoscale {
		opts = append(opts, f.autoscaleOptions()...)
	}
	if f.stopOn != nil {
		opts = append(opts, weir.StopOn(f.stopOn))
	}
	if f.leaveOn != nil {
		opts = append(opts, weir.LeaveOn(f.leaveOn))
	}
	if f.epochRecords > 0 {
		opts = append(opts, weir.EpochRecords(f.epochRecords))
	}
	if f.active > 0 {
		opts = append(opts, weir.ActiveInstances(f.active))
	}
	if f.ordered {
		opts = append(opts, weir.Ordered())
	}
	opts = append(opts, f.cluster.options()...)
	if f.state == "pebble" {
		opts = append(opts, pebblestate.Dir(f.stateDir))
	}
	if f.fromCkpt != "" && f.ckptDir == "" {
		f.ckptDir = filepath.Dir(f.fromCkpt)
	}
	if f.ckptDir != "" {
		every := f.ckptEvery
		if every <= 0 && f.ckptInterval > 0 && f.epochRecords == 0 {
			every = int(max(1, f.ckptInterval/f.interval))
		}
		if every <= 0 {
			every = 10
		}
		opts = append(opts, weir.Checkpoints(f.ckptDir, every, f.ckptKeep))
		if f.fromCkpt != "" {
			opts = append(opts, weir.FromCheckpoint(f.fromCkpt))
		}
	}
	if fs := deadLetterFiles(f.trace, f.cluster.resolved.Processes()); fs != nil {
		opts = append(opts, weir.TraceFile(fs[max(0, f.cluster.resolved.Self)]))
	}
	if f.partitioning.name != "all" {
		opts = append(opts, weir.Partitioning(f.partitioning.name))
	}
	return opts
}

// partitioning is the value of --partitioning: "auto" or a strategy's
// name, or "all" where a command allows it.
type partitioning struct {
	name     string
	allowAll bool
}

func (p *partitioning) names() []string {
	names := []string{"auto"}
	for _, s := range partition.Strategies() {
		names = append(names, s.String())
	}
	if p.allowAll {
		names = append(names, "all")
	}
	return names
}

func (p *partitioning) choices() string {
	n := p.names()
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

func (p *partitioning) String() string { return p.name }

func (p *partitioning) Type() string { return "strategy" }

// Set implements pflag.Value.
func (p *partitioning) Set(s string) error {
	if !slices.Contains(p.names(), s) {
		return fmt.Errorf("unknown partitioning %q (want %s)", s, p.choices())
	}
	p.name = s
	return nil
}

// createOut opens an output file, reporting a one-line error.
func createOut(path string) (*os.File, error) {
	if path == "" {
		return nil, fmt.Errorf("--out is required")
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// deadLetterFiles are the files --dead-letter FILE names: FILE, or in a
// job of several processes FILE.process-I for each process I.
func deadLetterFiles(file string, procs int) []string {
	if file == "" {
		return nil
	}
	if procs <= 1 {
		return []string{file}
	}
	out := make([]string, procs)
	for i := range out {
		out[i] = fmt.Sprintf("%s.process-%d", file, i)
	}
	return out
}

// readSince says, after a count of records in a summary, what it covers:
// the checkpoint the run resumed from (the count includes what was read
// before it) and, in a distributed job, that it is over every process.
func readSince(m weir.Metrics, jf jobFlags) string {
	return restored(m) + jf.cluster.share()
}

func restored(m weir.Metrics) string {
	if m.RestoredFrom > 0 {
		return fmt.Sprintf(" (resumed from checkpoint %d)", m.RestoredFrom)
	}
	return ""
}

// autoscaleOptions are --autoscale's: every operator planned at
// --max-workers, the keyed ones starting over --workers of them (unless
// --active-instances says otherwise), and the autoscaler.
func (f *jobFlags) autoscaleOptions() []weir.JobOption {
	pol := weir.DefaultAutoscalePolicy
	pol.Utilization = f.targetUtil
	pol.Boundary = min(pol.Boundary, f.targetUtil/2)
	opts := []weir.JobOption{weir.Autoscale(pol)}
	if f.maxWorkers > f.workers {
		opts = append(opts, weir.Workers(f.maxWorkers))
		if f.active == 0 {
			opts = append(opts, weir.ActiveInstances(f.workers*max(1, f.cluster.resolved.Processes())))
		}
	}
	return opts
}
