package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/nexmark"
)

// nexmarkLong is the help of weir run nexmark.
var nexmarkLong = `Runs the Nexmark query --query (` + strings.Join(nexmark.Names(), ", ") + `) and writes its
result as CSV, with a header row, to --out (default: standard output);
times are integer milliseconds. An updating query (q4) writes a row per
change: the last row of a key is its value. A summary goes to standard
error.

Without --input the events come from the built-in generator, for
--duration or --events N, paced at --rate events per second of wall time
(event times follow the wall clock), or with --rate 0 as fast as possible
with synthetic event times (--event-rate, --start-time, --seed: then
the run reads the events weir gen nexmark writes with the same flags).
With --input it reads JSON-lines events (weir gen nexmark's form); a bad
line stops the job with its file and line, or goes to --dead-letter.
--source reads them from a Kafka topic or a NATS stream instead (and
--bounded stops at the latest when the job started); --sink writes the
rows, as the query emits them, to a topic, a stream or a file.

  weir run nexmark --query q5 --events 10000000 --rate 0 --out hot.csv
  weir gen nexmark --events 100000 --event-rate 1000 --out ev.jsonl && weir run nexmark --query q8 --input ev.jsonl`

func runNexmarkCmd() *cobra.Command {
	var (
		jf         jobFlags
		gf         nexmarkGenFlags
		query      string
		events     string
		inputs     []string
		out        string
		deadLetter string
		duration   time.Duration
		rate       float64
		conn       connectFlags
	)
	cmd := &cobra.Command{
		Use:   "nexmark",
		Short: "A Nexmark query over generated events or a JSON-lines file; writes its result as CSV",
		Long:  nexmarkLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkNexmarkQuery(query, false); err != nil {
				return err
			}
			if err := checkRate(cmd, rate); err != nil {
				return err
			}
			if err := checkDurations(cmd, "duration"); err != nil {
				return err
			}
			fl := cmd.Flags()
			ctx, release := jobSignals(cmd.Context(), &jf)
			defer release()
			if out == stdinPath {
				out = "" // standard output
			}
			r := nexmarkRun{jf: jf, query: query, out: out, deadLetter: deadLetter, conn: conn}
			if err := r.conn.resolve(len(inputs) > 0 || conn.source == "", "--input", out != "", "", "kafka", "nats", "file"); err != nil {
				return err
			}
			if len(inputs) > 0 || conn.source != "" {
				if err := noGeneratorFlags(fl); err != nil {
					return err
				}
				if !fl.Changed("rate") {
					rate = 0 // a file is read as fast as possible unless paced
				}
				return r.file(ctx, inputs, rate)
			}
			if deadLetter != "" {
				return fmt.Errorf("--dead-letter %s: bad lines come from --input, and there is none", deadLetter)
			}
			n, isNum, err := parseCount("events", events, "events")
			switch {
			case err != nil:
				return err
			case events != "" && !isNum:
				return fmt.Errorf("--events %s: not a number of events (a file of events is --input)", events)
			case n > 0 && !fl.Changed("duration"):
				duration = 0
			}
			if rate > 0 {
				for _, name := range []string{"event-rate", "start-time"} {
					if fl.Changed(name) {
						return fmt.Errorf("--%s %s: a paced generator (--rate %s) stamps its events with the wall clock; give --rate 0 for synthetic event times",
							name, fl.Lookup(name).Value, fl.Lookup("rate").Value)
					}
				}
			}
			if err := gf.check(n); err != nil {
				return err
			}
			g := gf.gen(n, rate)
			g.Duration = duration
			return r.generated(ctx, g)
		},
	}
	jf.register(cmd.Flags())
	gf.register(cmd.Flags())
	cmd.Flags().StringVar(&query, "query", "", "the query: "+strings.Join(nexmark.Names(), ", "))
	cmd.Flags().StringVar(&events, "events", "", "number of events to generate (default: for --duration)")
	cmd.Flags().DurationVar(&duration, "duration", 10*time.Second, "how long the generator runs (0: until --events)")
	cmd.Flags().Float64Var(&rate, "rate", 1_000_000, "events per second, generated or replayed from --input (0: as fast as possible; --input is not paced unless given)")
	cmd.Flags().StringSliceVar(&inputs, "input", nil, "JSON-lines event `FILE`s (as weir gen nexmark writes them): files, directories, patterns or @LIST; repeat or comma-separate")
	cmd.Flags().StringVar(&out, "out", "", "result CSV `FILE` (default, or -: standard output)")
	conn.register(cmd.Flags(), "JSON-lines events", "a CSV line per row as the query emits it (an updating query's every update)")
	cmd.Flags().StringVar(&deadLetter, "dead-letter", "", "write bad input lines, as JSON with their position and reason, to `FILE` (FILE.process-I in a distributed job) instead of failing")
	return cmd
}

// checkNexmarkQuery refuses a query name that is not one of the queries
// (or "all", where allowed).
func checkNexmarkQuery(q string, all bool) error {
	names := strings.Join(nexmark.Names(), ", ")
	if all {
		names += " or all"
	}
	switch {
	case q == "":
		return fmt.Errorf("--query is required: %s", names)
	case all && q == "all", nexmark.Header(q) != "":
		return nil
	}
	return fmt.Errorf("--query %s: no such query; want %s", q, names)
}

// noGeneratorFlags refuses the generator's flags when the events come
// from --input or --source.
func noGeneratorFlags(fl *pflag.FlagSet) error {
	for _, name := range []string{"events", "duration", "seed", "event-rate", "start-time"} {
		if fl.Changed(name) {
			return fmt.Errorf("--%s %s: the events come from --input or --source; the generator's flags do not apply", name, fl.Lookup(name).Value)
		}
	}
	return nil
}

// nexmarkRun is one run of weir run nexmark.
type nexmarkRun struct {
	jf         jobFlags
	query      string
	out        string
	deadLetter string
	dl         *file.DeadLetter
	conn       connectFlags
}

// file runs the query over JSON-lines files.
func (r nexmarkRun) file(ctx context.Context, inputs []string, rate float64) error {
	var files []string
	var err error
	if r.conn.source == "" {
		if files, err = expandInputs(inputs); err != nil {
			return err
		}
		if files[0] == stdinPath {
			return fmt.Errorf("--input -: run nexmark reads files, which it can read again after a restart and split among its workers; give files")
		}
	}
	var ps paths
	ps.input("--input", files...)
	r.conn.paths(&ps, r.jf.cluster.leader())
	ps.output("--out", r.out, r.jf.cluster.leader())
	for i, dl := range deadLetterFiles(r.deadLetter, r.jf.cluster.resolved.Processes()) {
		ps.output("--dead-letter", dl, i == r.jf.cluster.resolved.Self)
	}
	ps.jobDirs(&r.jf)
	if err := ps.check(); err != nil {
		return err
	}
	if r.deadLetter != "" {
		// A fresh start empties the file; a restart keeps what it holds
		// (file.OpenDeadLetter).
		if r.dl, err = file.OpenDeadLetter(r.deadLetter); err != nil {
			return err
		}
		defer r.dl.Close()
	}
	in := nexmark.JSONInput(files, file.Options{DeadLetter: r.dl})
	if r.conn.source != "" {
		in, err = lineSource(r.conn.src, r.conn.bounded, r.dl, nexmark.DecodeJSON, func(e gen.NexmarkEvent) int64 { return e.Time() })
		if err != nil {
			return err
		}
		if err := checkNow(ctx, in); err != nil {
			return err
		}
	}
	if rate > 0 {
		in = weir.Paced(in, rate)
	}
	return r.run(ctx, in)
}

// generated runs the query over the built-in generator.
func (r nexmarkRun) generated(ctx context.Context, g gen.Nexmark) error {
	if g.Events == 0 && g.Duration == 0 {
		return fmt.Errorf("the generator needs --duration or --events N to end")
	}
	if r.jf.cluster.resolved.Processes() > 1 && g.Events == 0 {
		return fmt.Errorf("a distributed generator run needs --events, so that every process generates its share of the same events")
	}
	var ps paths
	ps.output("--out", r.out, r.jf.cluster.leader())
	r.conn.paths(&ps, r.jf.cluster.leader())
	ps.jobDirs(&r.jf)
	if err := ps.check(); err != nil {
		return err
	}
	return r.run(ctx, g)
}

func (r nexmarkRun) run(ctx context.Context, in weir.Input[gen.NexmarkEvent]) error {
	jf := r.jf
	leader := jf.cluster.leader()
	checkpoints := jf.ckptDir != "" || jf.fromCkpt != ""
	if r.conn.sink != "" {
		return r.runSink(ctx, in)
	}
	o, err := newNexmarkOut(r.out, nexmark.Header(r.query), checkpoints || !leader)
	if err != nil {
		return err
	}
	defer o.abort()
	prog := newProgress(os.Stderr)
	if r.out == "" && newProgress(os.Stdout).tty {
		prog.tty = false // the rows go to the same terminal
	}
	job := weir.NewJob("nexmark-"+r.query, append(jf.options(), weir.OnEpoch(prog.epoch))...)
	if err := nexmark.Add(r.query, weir.Source(job, "events", in), nexmark.Sinks{CSV: o.output()}); err != nil {
		return err
	}
	where := r.out
	if where == "" {
		where = "standard output"
	}
	start := time.Now()
	prog.start(start)
	err = jf.observe.run(ctx, job)
	prog.stop()
	m := job.Metrics()
	if err != nil {
		return stoppedRun(err, "nexmark "+r.query, m, jf, "the result ("+where+")")
	}
	if r.dl != nil {
		if err := r.dl.Close(); err != nil {
			return err
		}
	}
	if !leader {
		return nil // process 0 writes the result and the summary
	}
	rows, err := o.finish()
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	fmt.Fprintf(os.Stderr, "nexmark %s: %d events%s in %.2fs (%.0f events/s), %d workers, %d epochs, epoch latency p50 %.2fms p99 %.2fms, %d rows written to %s",
		r.query, m.Records, readSince(m, jf), secs, float64(m.Records)/secs, jf.workers, m.Epochs, msf(m.LatencyP50), msf(m.LatencyP99), rows, where)
	if r.dl != nil {
		dl := r.dl.Path()
		if jf.cluster.resolved.Processes() > 1 {
			dl = r.deadLetter + ".process-*"
		}
		fmt.Fprintf(os.Stderr, ", %d bad lines in %s", m.Counters["dead_letters"], dl)
	}
	if m.Late > 0 {
		fmt.Fprintf(os.Stderr, ", %d late events not counted (out of order by more than %v)", m.Late, nexmark.MaxOutOfOrder)
	}
	fmt.Fprintln(os.Stderr)
	return nil
}

// runSink runs the query with its rows to --sink, as it emits them.
func (r nexmarkRun) runSink(ctx context.Context, in weir.Input[gen.NexmarkEvent]) error {
	out, err := lineSink(r.conn.dst, func(s string, b []byte) []byte { return append(b, s...) }, true)
	if err != nil {
		return err
	}
	if err := checkNow(ctx, out); err != nil {
		return err
	}
	job := weir.NewJob("nexmark-"+r.query, r.jf.options()...)
	if err := nexmark.Add(r.query, weir.Source(job, "events", in), nexmark.Sinks{CSV: out}); err != nil {
		return err
	}
	start := time.Now()
	if err := r.jf.observe.run(ctx, job); err != nil {
		return stoppedRun(err, "nexmark "+r.query, job.Metrics(), r.jf, "the rows")
	}
	if r.jf.cluster.leader() {
		m := job.Metrics()
		fmt.Fprintf(os.Stderr, "nexmark %s: %d events%s in %.2fs, rows to %s\n", r.query, m.Records, readSince(m, r.jf), time.Since(start).Seconds(), r.conn.sink)
	}
	return nil
}
