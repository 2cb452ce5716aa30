package ysb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/ysbjson"
)

// LoadCampaigns reads an "ad_id,campaign_id" CSV file with that header.
func LoadCampaigns(path string) (Campaigns, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ysb: %w", err)
	}
	defer f.Close()
	return ReadCampaigns(f, path)
}

// ReadCampaigns reads the campaign map from r; name is used in errors.
func ReadCampaigns(r io.Reader, name string) (Campaigns, error) {
	sc := bufio.NewScanner(r)
	c := Campaigns{}
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if line == 1 {
			if strings.ReplaceAll(text, " ", "") != "ad_id,campaign_id" {
				return nil, fmt.Errorf("ysb: %s:1: want the header line \"ad_id,campaign_id\", got %q", name, text)
			}
			continue
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		ad, camp, ok := strings.Cut(text, ",")
		ad, camp = strings.TrimSpace(ad), strings.TrimSpace(camp)
		if !ok || ad == "" || camp == "" || strings.Contains(camp, ",") {
			return nil, fmt.Errorf("ysb: %s:%d: want \"ad_id,campaign_id\", got %q", name, line, text)
		}
		if prev, dup := c[ad]; dup && prev != camp {
			return nil, fmt.Errorf("ysb: %s:%d: ad %s maps to both %s and %s", name, line, ad, prev, camp)
		}
		c[ad] = camp
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ysb: %s: %w", name, err)
	}
	if line == 0 {
		return nil, fmt.Errorf("ysb: %s: empty file; want the header line \"ad_id,campaign_id\"", name)
	}
	return c, nil
}

// FileConfig is the file-based YSB job.
type FileConfig struct {
	Events    []string
	Campaigns Campaigns
	Workers   int // 0: weir.Workers' default
	MaxDelay  time.Duration
	Interval  time.Duration // 0: weir.BatchInterval's default
	// DeadLetter, if set, receives the bad lines (file.OpenDeadLetter,
	// or file.NewDeadLetter); nil: bad input stops the job.
	DeadLetter *file.DeadLetter
	// Rate, if positive, replays the events at that many per second of
	// wall time (weir.Paced).
	Rate    float64
	Options []weir.JobOption
	// Observe, if set, is called with the built job before it runs (to
	// serve its metrics, say); the func it returns is called after.
	Observe func(*weir.Job) (stop func(), err error)
}

// FileRun is what the file job produced.
type FileRun struct {
	Results []Result
	// DeadLetters is the job's count of bad lines over all its attempts
	// and, in a distributed job, all its processes (Metrics.Counters'
	// "dead_letters", gathered from the processes' summaries).
	DeadLetters int64
	Metrics     weir.Metrics
}

// MaxEventTime bounds the event_time the file job accepts: |event_time|
// <= 2^53 ms, some 285,000 years either side of 1970. Those are the
// integers a float64 holds exactly, as JavaScript and many JSON tools
// read numbers, so a larger value is a mistake rather than a time. And
// the engine's windows hold every time but those within one window length
// of ±2^63, while a time.Duration is at most 2^43 ms: every accepted event
// has an exact window, and neither its watermark (minus at most 2^43 ms of
// out-of-orderness) nor its window's cleanup comes near ±2^63.
const MaxEventTime = 1 << 53

// Decoder returns the event decoder of the file job: JSON, plus the checks
// that the event time is within ±MaxEventTime and that the event's ad has
// a campaign. Either failure makes the line bad input, reported with its
// file and line or sent to the dead-letter output, before the event
// reaches a watermark. An ad missing from the campaign map is bad input
// whatever the event type: the two files disagree.
func Decoder(c Campaigns) func(line string) (gen.YSBEvent, error) {
	ads := newAdSet(c)
	return func(line string) (gen.YSBEvent, error) {
		e, err := ysbjson.Decode(line)
		if err != nil {
			return e, err
		}
		if e.EventTime < -MaxEventTime || e.EventTime > MaxEventTime {
			return e, fmt.Errorf("event_time %d is outside ±2^53 ms", e.EventTime)
		}
		if !ads.has(e.AdID) {
			return e, fmt.Errorf("ad %q has no campaign", e.AdID)
		}
		return e, nil
	}
}

// BuildFile adds the file job to a new job and returns it with the sink
// that collects the results.
func BuildFile(cfg FileConfig) (*weir.Job, *Collector) {
	var opts []weir.JobOption
	if cfg.Workers != 0 {
		opts = append(opts, weir.Workers(cfg.Workers))
	}
	if cfg.Interval != 0 {
		opts = append(opts, weir.BatchInterval(cfg.Interval))
	}
	opts = append(opts, cfg.Options...)
	job := weir.NewJob("ysb", opts...)
	var in weir.Input[gen.YSBEvent] = file.JSONLines(cfg.Events, Decoder(cfg.Campaigns), file.Options{DeadLetter: cfg.DeadLetter})
	if cfg.Rate > 0 {
		in = weir.Paced(in, cfg.Rate)
	}
	src := weir.Source(job, "events", in)
	col := &Collector{}
	weir.Sink(Query(src, cfg.Campaigns, cfg.MaxDelay), col, weir.Name("collect"))
	return job, col
}

// RunFile runs the file job to the end.
func RunFile(ctx context.Context, cfg FileConfig) (FileRun, error) {
	if cfg.Campaigns == nil {
		return FileRun{}, errors.New("ysb: no campaign map")
	}
	job, col := BuildFile(cfg)
	if cfg.Observe != nil {
		stop, err := cfg.Observe(job)
		if err != nil {
			return FileRun{}, err
		}
		defer stop()
	}
	err := job.Run(ctx)
	run := FileRun{Results: col.Sorted(), Metrics: job.Metrics()}
	run.DeadLetters = run.Metrics.Counters["dead_letters"]
	return run, err
}

// Collector keeps the results of a job; Sorted returns them in output
// order.
type Collector struct {
	weir.Collect[Result]
}

// Sorted returns the results sorted by campaign and window.
func (c *Collector) Sorted() []Result {
	out := c.Records()
	Sort(out)
	return out
}

// WriteCSV writes results with the header campaign_id,window_start_ms,count.
func WriteCSV(w io.Writer, rs []Result) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("campaign_id,window_start_ms,count\n")
	var buf []byte
	for _, r := range rs {
		buf = append(buf[:0], r.Key...)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, r.Start, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, r.Value, 10)
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}
