package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/ysb"
)

func runYSBCmd() *cobra.Command {
	var (
		jf         jobFlags
		events     string
		campaigns  string
		out        string
		maxDelay   time.Duration
		deadLetter string
		duration   time.Duration
		rate       float64
		source     string
		sink       string
		redisURI   string
		bounded    bool
	)
	cmd := &cobra.Command{
		Use:   "ysb",
		Short: "Yahoo Streaming Benchmark: views per campaign per 10 s window",
		Long: `Counts the "view" events of each campaign in 10-second tumbling event-time windows.

Without --events FILE it runs on the built-in generator for --duration (or
--events N events) with a live progress line. With --events FILE --campaigns
FILE --out FILE it reads JSON-lines events and an ad_id,campaign_id CSV and
writes campaign_id,window_start_ms,count sorted by campaign and window.

YSB in its original form reads Kafka and joins against Redis:

  weir ysb-setup --redis redis://127.0.0.1:6379
  weir run ysb --source kafka://127.0.0.1:9092/ad-events --redis redis://127.0.0.1:6379

--source and --sink take kafka://, nats://, file:// (and, for --sink,
postgres:// and redis://) URIs; --out FILE stays the short form of a sorted
CSV written at the end. With --checkpoint-dir the Kafka, NATS (by message
id), PostgreSQL, Redis and file:// sinks are exactly-once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkRate(cmd, rate); err != nil {
				return err
			}
			if err := checkDurations(cmd, "duration", "max-delay"); err != nil {
				return err
			}
			ctx, release := jobSignals(cmd.Context(), &jf)
			defer release()
			n, isNum, err := parseCount("events", events, "events")
			if err != nil {
				return err
			}
			if source != "" || sink != "" || redisURI != "" {
				y := ysbConnect{source: source, sink: sink, redis: redisURI, campaigns: campaigns, out: out, deadLetter: deadLetter,
					events: n, duration: duration, maxDelay: maxDelay, rate: rate, bounded: bounded}
				return runYSBConnect(ctx, jf, y.settle(cmd, events, isNum))
			}
			if bounded {
				return fmt.Errorf("--bounded needs --source URI")
			}
			if events != "" && !isNum {
				if st, err := os.Stat(events); os.IsNotExist(err) {
					return fmt.Errorf("--events %s: neither a number of events nor an existing file", events)
				} else if err != nil {
					return fmt.Errorf("--events %v", unwrapPath(err))
				} else if !st.Mode().IsRegular() {
					return fmt.Errorf("--events %s: not a regular file", events)
				}
				if !cmd.Flags().Changed("rate") {
					rate = 0 // a file is read as fast as possible unless paced
				}
				return runYSBFile(ctx, jf, events, campaigns, out, deadLetter, maxDelay, rate)
			}
			if campaigns != "" || deadLetter != "" {
				return fmt.Errorf("--campaigns and --dead-letter need --events FILE")
			}
			if n > 0 && !cmd.Flags().Changed("duration") {
				duration = 0
			}
			return runYSBGen(ctx, jf, n, duration, rate, maxDelay, out)
		},
	}
	jf.register(cmd.Flags())
	cmd.Flags().StringVar(&events, "events", "", "JSON-lines events `FILE`, or a number of events to generate")
	cmd.Flags().StringVar(&campaigns, "campaigns", "", "ad_id,campaign_id CSV `FILE` (with --events FILE)")
	cmd.Flags().StringVar(&out, "out", "", "output CSV `FILE`")
	cmd.Flags().DurationVar(&maxDelay, "max-delay", 5*time.Second, "how far out of event-time order input may be")
	cmd.Flags().StringVar(&deadLetter, "dead-letter", "", "write bad input lines, as JSON with their position and reason, to `FILE` (FILE.process-I in a distributed job) instead of failing")
	cmd.Flags().DurationVar(&duration, "duration", 20*time.Second, "how long the generator runs (0: until --events)")
	cmd.Flags().StringVar(&source, "source", "", "read the JSON-lines events from `URI`: kafka://host:port/topic, nats://host:port/stream or file://path")
	cmd.Flags().StringVar(&sink, "sink", "", "write each window's count to `URI` as it closes: kafka://host:port/topic, nats://host:port/stream or file://path (lines campaign_id,window_start_ms,count), postgres://user@host:port/db?table=T (an upsert of T, default ysb_windows), redis://host:port (YSB's layout)")
	cmd.Flags().StringVar(&redisURI, "redis", "", "join each ad's campaign from Redis at `URI` (loaded by weir ysb-setup), with a local cache; without --sink or --out, the results go there too, in YSB's layout")
	cmd.Flags().BoolVar(&bounded, "bounded", false, "with --source kafka:// or nats://, stop at the records that were the latest when the job started")
	cmd.Flags().Float64Var(&rate, "rate", 1_000_000, "events per second, generated or replayed from --events FILE (0: as fast as possible; a file is not paced unless given)")
	return cmd
}

func runYSBFile(ctx context.Context, jf jobFlags, events, campaigns, out, deadLetter string, maxDelay time.Duration, rate float64) error {
	if campaigns == "" {
		return fmt.Errorf("--campaigns is required with --events FILE")
	}
	if out == "" {
		return fmt.Errorf("--out is required with --events FILE")
	}
	var ps paths
	ps.input("--events", events)
	ps.input("--campaigns", campaigns)
	ps.output("--out", out, jf.cluster.leader())
	for i, dl := range deadLetterFiles(deadLetter, jf.cluster.resolved.Processes()) {
		ps.output("--dead-letter", dl, i == jf.cluster.resolved.Self)
	}
	ps.jobDirs(&jf)
	if err := ps.check(); err != nil {
		return err
	}
	camp, err := ysb.LoadCampaigns(campaigns)
	if err != nil {
		return err
	}
	cfg := ysb.FileConfig{Events: []string{events}, Campaigns: camp, Workers: jf.workers, MaxDelay: maxDelay, Rate: rate, Options: jf.options(), Observe: jf.observe.start}
	var dl *file.DeadLetter
	if deadLetter != "" {
		// A fresh start empties the dead-letter file: ps.check made sure
		// it is none of the job's other files. In a distributed job each process writes its own bad lines,
		// to FILE.process-I; see file.OpenDeadLetter.
		if dl, err = file.OpenDeadLetter(deadLetter); err != nil {
			return err
		}
		defer dl.Close()
		cfg.DeadLetter = dl
	}
	start := time.Now()
	run, err := ysb.RunFile(ctx, cfg)
	if err != nil {
		return stoppedRun(err, "ysb", run.Metrics, jf, out)
	}
	if dl != nil {
		if err := dl.Close(); err != nil {
			return err
		}
	}
	if !jf.cluster.leader() {
		return nil // process 0 writes the output and the summary
	}
	f, err := createOut(out)
	if err != nil {
		return err
	}
	if err := ysb.WriteCSV(f, run.Results); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	m := run.Metrics
	fmt.Fprintf(os.Stderr, "ysb: %d events%s in %.2fs, %d windows written to %s", m.Records, readSince(m, jf), time.Since(start).Seconds(), len(run.Results), out)
	if dl != nil {
		// The job's bad lines, over its attempts and processes.
		where := dl.Path()
		if jf.cluster.resolved.Processes() > 1 {
			where = deadLetter + ".process-*"
		}
		fmt.Fprintf(os.Stderr, ", %d bad lines in %s", run.DeadLetters, where)
	}
	if m.Late > 0 {
		fmt.Fprintf(os.Stderr, ", %d late events not counted (raise --max-delay)", m.Late)
	}
	fmt.Fprintln(os.Stderr)
	return nil
}

func runYSBGen(ctx context.Context, jf jobFlags, events int64, duration time.Duration, rate float64, maxDelay time.Duration, out string) error {
	if events == 0 && duration == 0 {
		return fmt.Errorf("the generator needs --duration or --events N to end")
	}
	if jf.cluster.resolved.Processes() > 1 && events == 0 {
		return fmt.Errorf("a distributed generator run needs --events, so that process 0 knows the total")
	}
	var ps paths
	ps.output("--out", out, jf.cluster.leader())
	ps.jobDirs(&jf)
	if err := ps.check(); err != nil {
		return err
	}
	g := gen.YSB{Rate: rate, Events: events, Duration: duration, Seed: 1}
	camp := ysb.FromAds(g.Ads())
	prog := newProgress(os.Stderr)
	opts := append(jf.options(), weir.OnEpoch(prog.epoch))
	job := weir.NewJob("ysb", opts...)
	col := &ysb.Collector{}
	weir.Sink(ysb.Query(weir.Source(job, "ysb-generator", g), camp, maxDelay), col, weir.Name("collect"))
	start := time.Now()
	prog.start(start)
	err := jf.observe.run(ctx, job)
	prog.stop()
	if err != nil {
		what := out
		if what == "" {
			what = "the summary"
		}
		return stoppedRun(err, "ysb", job.Metrics(), jf, what)
	}
	if !jf.cluster.leader() {
		return nil // process 0 reports and writes the output
	}
	res := col.Sorted()
	m := job.Metrics()
	secs := time.Since(start).Seconds()
	note := restored(m)
	if jf.cluster.resolved.Processes() > 1 {
		m.Records, note = events, ""
	}
	fmt.Printf("ysb: %d events%s in %.1fs (%.0f events/s), %d workers, %d epochs, epoch latency p50 %.2fms p99 %.2fms, %d windows over %d campaigns, %d late\n",
		m.Records, note, secs, float64(m.Records)/secs, jf.workers, m.Epochs, msf(m.LatencyP50), msf(m.LatencyP99),
		len(res), len(campaignSet(res)), m.Late)
	if out != "" {
		f, err := createOut(out)
		if err != nil {
			return err
		}
		defer f.Close()
		return ysb.WriteCSV(f, res)
	}
	return nil
}

func campaignSet(rs []ysb.Result) map[string]bool {
	s := map[string]bool{}
	for _, r := range rs {
		s[r.Key] = true
	}
	return s
}
