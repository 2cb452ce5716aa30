package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/jobs/skew"
)

// skewFlags are the flags of `weir bench skew`.
type skewFlags struct {
	jf       jobFlags
	data     skew.Config
	runs     int
	procs    int
	simulate bool
	sim      skew.SimConfig
	textDir  string
	profile  string
	rate     float64
}

func benchSkewCmd() *cobra.Command {
	var f skewFlags
	cmd := &cobra.Command{
		Use:   "skew",
		Short: "A keyed count over skewed keys, by partitioning strategy; prints one JSON object",
		Long: `Generates --events records with Zipf (--s) or uniform keys, or with the
words of the *.go files under --text-dir in their order (--dist text), in
memory (not timed), then runs the count per key and one-second window over them --runs
times and reports the median run, with the partitioning figures of the
count. GOMAXPROCS is set to --workers unless --procs says otherwise. With
--partitioning all it runs every strategy and auto, interleaved, and reports each
one's medians and its throughput relative to hash. Every run's output is
checked against a plain computation. Under weir launch every process
generates the same records and reads its share of them; process 0
checks the output and reports.

With --simulate it runs no job: it replays --epochs epochs of --epoch-size
keys (Zipf, uniform, or the words of the *.go files under --text-dir with
--dist text) through every strategy's planner over --partitions map blocks
and reducers, and reports imbalance, split keys and the throughput implied
by a cost model: a map task costs --fold-ns per record plus --key-ns per
distinct key of its block, a reducer --merge-ns per partial it receives;
under hash the map tasks only route (--route-ns per record) and each
reducer folds its raw records (--fold-ns per record, --key-ns per key).
An epoch takes its slowest map task plus its slowest reducer.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.simulate {
				if err := f.jf.cluster.single("bench skew --simulate"); err != nil {
					return err
				}
				if err := f.jf.observe.refuse("--simulate runs none"); err != nil {
					return err
				}
				return f.runSimulation()
			}
			return f.runBench(cmd)
		},
	}
	fs := cmd.Flags()
	f.jf.partitioning.allowAll = true
	f.jf.register(fs)
	fs.Lookup("interval").DefValue = "100ms"
	f.jf.interval = 100 * time.Millisecond
	fs.StringVar(&f.data.Dist, "dist", "zipf", "key distribution: zipf, uniform or text (the words of the *.go files under --text-dir)")
	fs.Float64Var(&f.data.S, "s", 1.5, "Zipf exponent (> 0)")
	fs.IntVar(&f.data.Keys, "keys", 100_000, "number of distinct keys")
	fs.IntVar(&f.data.Events, "events", 5_000_000, "number of records")
	fs.Uint64Var(&f.data.Seed, "seed", 1, "seed of the keys")
	fs.Float64Var(&f.data.EventsPerSecond, "event-rate", 1_000_000, "records per second of event time (a window holds this many)")
	fs.Float64Var(&f.rate, "rate", 0, "records per second of wall time (zipf only): the generator paces the input, event time follows the clock, and the output is checked per key")
	fs.IntVar(&f.runs, "runs", 1, "timed runs of each strategy; the medians are reported")
	fs.IntVar(&f.procs, "procs", 0, "GOMAXPROCS (default: --workers)")
	fs.StringVar(&f.profile, "cpuprofile", "", "write a CPU profile of the runs to `FILE`")
	fs.BoolVar(&f.simulate, "simulate", false, "simulate the planners under a cost model instead of running the job")
	fs.IntVar(&f.sim.Partitions, "partitions", 0, "(--simulate) map blocks and reducers (default: --workers)")
	fs.IntVar(&f.sim.Epochs, "epochs", 5, "(--simulate) number of epochs")
	fs.IntVar(&f.sim.EpochRecords, "epoch-size", 200_000, "(--simulate) records per epoch")
	fs.StringVar(&f.textDir, "text-dir", "", "(--dist text) directory of *.go files (default: the Go source tree)")
	c := skew.DefaultSimCost
	fs.Float64Var(&f.sim.Cost.Fold, "fold-ns", c.Fold, "(--simulate) cost of folding one record, ns")
	fs.Float64Var(&f.sim.Cost.PerKey, "key-ns", c.PerKey, "(--simulate) cost of one distinct key in a block or reducer, ns")
	fs.Float64Var(&f.sim.Cost.Merge, "merge-ns", c.Merge, "(--simulate) cost of merging one partial, ns")
	fs.Float64Var(&f.sim.Cost.Route, "route-ns", c.Route, "(--simulate) cost of routing one record (hash), ns")
	return cmd
}

// strategies returns the strategies --partitioning names.
func (f *skewFlags) strategies() []string {
	if f.jf.partitioning.name != "all" {
		return []string{f.jf.partitioning.name}
	}
	var out []string
	for _, s := range partition.Strategies() {
		out = append(out, s.String())
	}
	return append(out, "auto")
}

func (f *skewFlags) runBench(cmd *cobra.Command) error {
	if f.data.Events <= 0 {
		return fmt.Errorf("--events must be positive")
	}
	if f.rate > 0 && f.data.Dist != "zipf" {
		return fmt.Errorf("--rate needs --dist zipf")
	}
	procs := f.procs
	if procs <= 0 {
		procs = max(1, f.jf.workers)
	}
	runtime.GOMAXPROCS(procs)
	recs, text, err := f.records()
	if err != nil {
		return err
	}
	want := skew.Reference(recs)
	strategies := f.strategies()
	stopProfile, err := startCPUProfile(f.profile)
	if err != nil {
		return err
	}
	defer stopProfile()
	figs := make(map[string]*figures, len(strategies))
	for _, s := range strategies {
		figs[s] = &figures{}
	}
	for range max(1, f.runs) {
		for _, s := range strategies {
			if err := f.timeOne(cmd, s, recs, want, figs[s]); err != nil {
				return err
			}
		}
	}
	if !f.jf.cluster.leader() {
		return nil
	}
	out := map[string]any{
		"job":        "skew",
		"processes":  max(1, f.jf.cluster.resolved.Processes()),
		"dist":       f.data.Dist,
		"keys":       f.data.Keys,
		"events":     len(recs),
		"workers":    f.jf.workers,
		"gomaxprocs": procs,
		"runs":       max(1, f.runs),
		"checked":    true,
	}
	switch f.data.Dist {
	case "zipf":
		out["s"] = f.data.S
	case "text":
		out["text_dir"], out["keys"] = text.dir, text.keys
	}
	if len(strategies) == 1 {
		for k, v := range figs[strategies[0]].medians() {
			out[k] = v
		}
		return json.NewEncoder(os.Stdout).Encode(out)
	}
	per := map[string]any{}
	ratios := map[string]float64{}
	hash := figs["hash"].median("events_per_s")
	for _, s := range strategies {
		per[s] = figs[s].medians()
		ratios[s] = figs[s].median("events_per_s") / hash
	}
	out["strategy"] = "all"
	out["strategies"] = per
	out["ratio_to_hash"] = ratios
	return json.NewEncoder(os.Stdout).Encode(out)
}

// perKey sums window counts per key.
func perKey(rs []skew.Result) map[uint64]int64 {
	m := map[uint64]int64{}
	for _, r := range rs {
		m[r.Key] += r.Value
	}
	return m
}

// figures gathers one strategy's figures over runs.
type figures struct {
	keys      []string
	runs      map[string][]float64
	partition map[string]any // of the last run
}

func (f *figures) add(k string, v float64) {
	if f.runs == nil {
		f.runs = map[string][]float64{}
	}
	if _, ok := f.runs[k]; !ok {
		f.keys = append(f.keys, k)
	}
	f.runs[k] = append(f.runs[k], v)
}

func (f *figures) median(k string) float64 { return median(f.runs[k]) }

// medians returns the median of every figure, with the last run's
// partitioning figures that are not numbers (the strategy in use, the
// task counts).
func (f *figures) medians() map[string]any {
	out := map[string]any{}
	for k, v := range f.partition {
		out[k] = v
	}
	for _, k := range f.keys {
		out[k] = f.median(k)
	}
	return out
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case int:
		return float64(x)
	}
	return 0
}

// timeOne runs the job once under strategy s and adds its figures to fg
// (on process 0, which checks its output against want).
func (f *skewFlags) timeOne(cmd *cobra.Command, s string, recs []skew.Record, want []skew.Result, fg *figures) error {
	runtime.GC()
	job := weir.NewJob("skew-bench", append(f.jf.options(), weir.Partitioning(s))...)
	col := &skew.Collector{}
	var src weir.Stream[skew.Record]
	if f.rate > 0 {
		z := f.data.Zipf()
		z.Rate = f.rate
		src = weir.Source(job, "records", z)
	} else {
		src = weir.Source(job, "records", weir.SliceSource[skew.Record]{Records: recs})
	}
	weir.Sink(skew.Query(src, 0), col, weir.Name("collect"))
	t0 := time.Now()
	if err := f.jf.observe.run(cmd.Context(), job); err != nil {
		return fmt.Errorf("%s: %w", s, err)
	}
	secs := time.Since(t0).Seconds()
	if f.jf.cluster.resolved.Processes() > 1 {
		secs = job.Metrics().Elapsed.Seconds() // not the wait for the other processes to connect
	}
	if !f.jf.cluster.leader() {
		return nil // process 0 has the output, checks it and reports
	}
	if f.rate > 0 {
		// Event times follow the clock: compare the counts per key.
		if got, exp := perKey(col.Sorted()), perKey(want); !maps.Equal(got, exp) {
			return fmt.Errorf("%s: engine counts per key (%d keys) disagree with the reference (%d keys)", s, len(got), len(exp))
		}
	} else if got := col.Sorted(); !slices.Equal(got, want) {
		return fmt.Errorf("%s: engine output (%d windows) disagrees with the reference (%d windows)", s, len(got), len(want))
	}
	m := job.Metrics()
	fg.add("seconds", secs)
	fg.add("events_per_s", float64(len(recs))/secs)
	fg.add("latency_p50_ms", ms(m.LatencyP50))
	fg.add("latency_p99_ms", ms(m.LatencyP99))
	fg.partition = partitionFigures(job, s)
	for _, k := range []string{"map_imbalance", "reduce_imbalance", "split_keys", "fragments", "epochs"} {
		fg.add(k, toFloat(fg.partition[k]))
	}
	return nil
}

// textInput describes the keys of --dist text.
type textInput struct {
	dir  string
	keys int
}

// records generates the bench's input: --dist text takes the times of a
// Zipf input and, as keys, the words of the *.go files under --text-dir
// in their order, from the start again when they run out.
func (f *skewFlags) records() ([]skew.Record, textInput, error) {
	if f.data.Dist != "text" {
		recs, err := skew.Generate(f.data)
		return recs, textInput{}, err
	}
	var t textInput
	if t.dir = f.textDir; t.dir == "" {
		var err error
		if t.dir, err = skew.GoSourceDir(); err != nil {
			return nil, t, err
		}
	}
	words, err := skew.GoWords(t.dir, f.data.Events)
	if err != nil {
		return nil, t, err
	}
	c := f.data
	c.Dist = "zipf"
	recs, err := skew.Generate(c)
	if err != nil {
		return nil, t, err
	}
	t.keys = skew.WordKeys(recs, words)
	return recs, t, nil
}

// partitionFigures returns the partitioning figures of the job's first
// keyed aggregation, or the requested strategy with zero figures if the
// job reports none.
func partitionFigures(job *weir.Job, requested string) map[string]any {
	st := weir.PartitionStats{Strategy: requested}
	if all := job.PartitionStats(); len(all) > 0 {
		st = all[0]
	}
	return map[string]any{
		"strategy":         st.Strategy,
		"partitions":       st.Partitions,
		"map_imbalance":    st.MapImbalance,
		"reduce_imbalance": st.ReduceImbalance,
		"split_keys":       st.SplitKeys,
		"fragments":        st.Fragments,
		"epochs":           st.Epochs,
		"map_tasks":        st.MapTasks,
		"reduce_tasks":     st.ReduceTasks,
		"task_changes":     st.TaskChanges,
	}
}

func (f *skewFlags) runSimulation() error {
	cfg := f.sim
	if cfg.Partitions == 0 {
		cfg.Partitions = max(1, f.jf.workers)
	}
	cfg.Dist, cfg.S, cfg.Keys, cfg.Seed = f.data.Dist, f.data.S, f.data.Keys, f.data.Seed
	out := map[string]any{
		"simulate":      true,
		"dist":          cfg.Dist,
		"partitions":    cfg.Partitions,
		"epochs":        cfg.Epochs,
		"epoch_records": cfg.EpochRecords,
		"cost_ns": map[string]float64{
			"fold": cfg.Cost.Fold, "key": cfg.Cost.PerKey, "merge": cfg.Cost.Merge, "route": cfg.Cost.Route,
		},
	}
	switch cfg.Dist {
	case "text":
		dir := f.textDir
		if dir == "" {
			var err error
			if dir, err = skew.GoSourceDir(); err != nil {
				return err
			}
		}
		words, err := skew.GoWords(dir, cfg.Epochs*cfg.EpochRecords)
		if err != nil {
			return err
		}
		cfg.Tokens = words
		out["text_dir"] = dir
		out["words"] = len(words)
	case "zipf":
		out["s"], out["keys"] = cfg.S, cfg.Keys
	default:
		out["keys"] = cfg.Keys
	}
	res, err := skew.Simulate(cfg)
	if err != nil {
		return err
	}
	per := map[string]skew.SimResult{}
	ratios := map[string]float64{}
	for _, r := range res {
		per[r.Strategy] = r
		ratios[r.Strategy] = r.RatioToHash
	}
	out["strategies"] = per
	out["ratio_to_hash"] = ratios
	return json.NewEncoder(os.Stdout).Encode(out)
}
