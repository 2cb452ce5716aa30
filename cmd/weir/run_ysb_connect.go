package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/connector/postgres"
	"github.com/weirstream/weir/connector/redis"
	"github.com/weirstream/weir/jobs/ysb"
)

// ysbConnect is YSB over connectors: events from --source (or --events
// FILE, or the generator), campaigns from --redis (or --campaigns), results
// to --sink (or --out, or --redis).
type ysbConnect struct {
	source, sink, redis, campaigns, out, deadLetter string
	eventsFile                                      string
	events                                          int64
	duration, maxDelay                              time.Duration
	rate                                            float64
	bounded                                         bool
}

// settle takes --events (a file, or n events to generate) and the
// defaults that depend on where the events come from.
func (y ysbConnect) settle(cmd *cobra.Command, events string, isNum bool) ysbConnect {
	if events != "" && !isNum {
		y.eventsFile = events
	}
	if y.eventsFile != "" || y.source != "" {
		y.events, y.duration = 0, 0
		if !cmd.Flags().Changed("rate") {
			y.rate = 0 // records are read as fast as they come unless paced
		}
	} else if y.events > 0 && !cmd.Flags().Changed("duration") {
		y.duration = 0
	}
	return y
}

func runYSBConnect(ctx context.Context, jf jobFlags, y ysbConnect) error {
	if y.eventsFile != "" {
		if y.source != "" {
			return fmt.Errorf("give --events FILE or --source URI, not both")
		}
		y.source = "file://" + y.eventsFile
	}
	var ps paths
	var src endpoint
	var err error
	if y.source != "" {
		if src, err = parseEndpoint("--source", y.source, "kafka", "nats", "file"); err != nil {
			return err
		}
		if src.scheme == "file" {
			ps.input("--source", src.name)
		}
	}
	if y.campaigns != "" {
		ps.input("--campaigns", y.campaigns)
	}
	for i, dl := range deadLetterFiles(y.deadLetter, jf.cluster.resolved.Processes()) {
		ps.output("--dead-letter", dl, i == jf.cluster.resolved.Self)
	}
	ps.output("--out", y.out, jf.cluster.leader())
	var dst endpoint
	switch {
	case y.sink != "" && y.out != "":
		return fmt.Errorf("give --sink URI or --out FILE, not both")
	case y.sink != "":
		if dst, err = parseEndpoint("--sink", y.sink, "kafka", "nats", "file", "postgres", "redis"); err != nil {
			return err
		}
		if dst.scheme == "file" {
			ps.output("--sink", dst.name, true)
		}
	case y.out == "" && y.redis == "":
		return fmt.Errorf("ysb needs where its results go: --sink URI, --out FILE or --redis URI")
	case y.out == "":
		if dst, err = parseEndpoint("--redis", y.redis, "redis"); err != nil {
			return err
		}
	}
	ps.jobDirs(&jf)
	if err := ps.check(); err != nil {
		return err
	}
	setup, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	camp, join, closeJoin, err := ysbCampaigns(setup, y, src)
	if err != nil {
		return err
	}
	defer closeJoin()
	job := weir.NewJob("ysb", jf.options()...)
	events, dl, err := ysbEvents(job, y, src, camp)
	if dl != nil {
		defer dl.Close()
	}
	if err != nil {
		return err
	}
	results := ysb.QueryJoin(events, join, y.maxDelay)
	col := &ysb.Collector{}
	var out weir.Output[ysb.Result] = col
	if y.out == "" {
		if out, err = ysbSink(dst); err != nil {
			return err
		}
		if err := check(setup, out); err != nil {
			return err
		}
	}
	weir.Sink(results, out, weir.Name("results"))
	start := time.Now()
	if err := jf.observe.run(ctx, job); err != nil {
		return stoppedRun(err, "ysb", job.Metrics(), jf, "the results")
	}
	if !jf.cluster.leader() {
		return nil
	}
	where := dst.uri
	if y.out != "" {
		where = y.out
		if err := writeYSBOut(y.out, col.Sorted()); err != nil {
			return err
		}
	}
	m := job.Metrics()
	secs := time.Since(start).Seconds()
	fmt.Fprintf(os.Stderr, "ysb: %d events%s in %.2fs (%.0f events/s), results to %s", m.Records, readSince(m, jf), secs, float64(m.Records)/secs, where)
	if n := m.Counters["dead_letters"]; n > 0 {
		fmt.Fprintf(os.Stderr, ", %d bad records in %s", n, y.deadLetter)
	}
	if m.Late > 0 {
		fmt.Fprintf(os.Stderr, ", %d late events not counted (raise --max-delay)", m.Late)
	}
	fmt.Fprintln(os.Stderr)
	return nil
}

// ysbCampaigns returns the campaign table and the join: a Redis lookup
// with a local cache over the table Redis holds, or the table of
// --campaigns, or the generator's.
func ysbCampaigns(ctx context.Context, y ysbConnect, src endpoint) (ysb.Campaigns, func(string) string, func(), error) {
	none := func() {}
	switch {
	case y.redis != "" && y.campaigns != "":
		return nil, nil, none, fmt.Errorf("give --campaigns FILE or --redis URI, not both")
	case y.redis != "":
		ep, err := parseEndpoint("--redis", y.redis, "redis")
		if err != nil {
			return nil, nil, none, err
		}
		camp, err := redis.ReadCampaigns(ctx, ep.url, ep.name)
		if err != nil {
			return nil, nil, none, err
		}
		if len(camp) == 0 {
			return nil, nil, none, fmt.Errorf("--redis %s: holds no campaigns; load them with weir ysb-setup --redis %s", y.redis, y.redis)
		}
		lk, err := redis.NewLookup(ctx, redis.LookupConfig{URL: ep.url, Prefix: ep.name, TTL: -1})
		if err != nil {
			return nil, nil, none, err
		}
		if err := lk.Preload(ctx, slices.Collect(maps.Keys(camp))); err != nil {
			lk.Close()
			return nil, nil, none, err
		}
		join := func(ad string) string {
			c, _, err := lk.Get(context.Background(), ad)
			if err != nil {
				panic(fmt.Errorf("ysb: campaign of ad %s: %w", ad, err))
			}
			return c
		}
		return ysb.Campaigns(camp), join, func() { lk.Close() }, nil
	case y.campaigns != "":
		camp, err := ysb.LoadCampaigns(y.campaigns)
		if err != nil {
			return nil, nil, none, err
		}
		return camp, func(ad string) string { return camp[ad] }, none, nil
	case y.source != "":
		return nil, nil, none, fmt.Errorf("--source needs the campaigns: --campaigns FILE or --redis URI")
	}
	camp := ysb.FromAds(gen.YSB{Seed: 1}.Ads())
	return camp, func(ad string) string { return camp[ad] }, none, nil
}

// ysbEvents adds the events' source to the job.
func ysbEvents(job *weir.Job, y ysbConnect, src endpoint, camp ysb.Campaigns) (weir.Stream[gen.YSBEvent], *file.DeadLetter, error) {
	if y.source == "" {
		if y.events == 0 && y.duration == 0 {
			return weir.Stream[gen.YSBEvent]{}, nil, fmt.Errorf("the generator needs --duration or --events N to end")
		}
		g := gen.YSB{Rate: y.rate, Events: y.events, Duration: y.duration, Seed: 1}
		return weir.Source(job, "ysb-generator", g), nil, nil
	}
	var dl *file.DeadLetter
	var err error
	if y.deadLetter != "" {
		if dl, err = file.OpenDeadLetter(y.deadLetter); err != nil {
			return weir.Stream[gen.YSBEvent]{}, nil, err
		}
	}
	in, err := lineSource(src, y.bounded, dl, ysb.Decoder(camp), func(e gen.YSBEvent) int64 { return e.EventTime })
	if err != nil {
		return weir.Stream[gen.YSBEvent]{}, dl, err
	}
	if err := checkNow(context.Background(), in); err != nil {
		return weir.Stream[gen.YSBEvent]{}, dl, err
	}
	if y.rate > 0 {
		in = weir.Paced(in, y.rate)
	}
	return weir.Source(job, "events", in), dl, nil
}

// ysbSink is where the results go: a line campaign_id,window_start_ms,count
// per window on Kafka, NATS or a file; an upsert of table T (default
// ysb_windows) in PostgreSQL; the original layout in Redis.
func ysbSink(ep endpoint) (weir.Output[ysb.Result], error) {
	switch ep.scheme {
	case "postgres", "postgresql":
		table := ep.name
		if table == "" {
			table = "ysb_windows"
		}
		return postgres.Upsert(postgres.Config{URL: ep.url, Table: table,
			Columns: []string{"campaign_id", "window_start", "count"}, Key: []string{"campaign_id", "window_start"},
			Create: "campaign_id text, window_start bigint, count bigint, primary key (campaign_id, window_start)"},
			func(r ysb.Result, dst []any) []any { return append(dst, r.Key, r.Start, r.Value) }), nil
	case "redis":
		return redis.YSBResults(redis.ResultsConfig{URL: ep.url, Prefix: ep.name}), nil
	}
	return lineSink(ep, appendYSBLine, false)
}

// appendYSBLine appends campaign_id,window_start_ms,count.
func appendYSBLine(r ysb.Result, b []byte) []byte {
	b = append(append(b, r.Key...), ',')
	b = append(strconv.AppendInt(b, r.Start, 10), ',')
	return strconv.AppendInt(b, r.Value, 10)
}

func writeYSBOut(path string, rs []ysb.Result) error {
	f, err := createOut(path)
	if err != nil {
		return err
	}
	if err := ysb.WriteCSV(f, rs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
