package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/nexmark"
)

// nexmarkStart is the default event time of the first generated Nexmark
// event (2023-11-14): fixed, so that the same flags generate the same
// events in every run and process.
const nexmarkStart = 1_700_000_000_000

// nexmarkGenFlags are the settings of the built-in Nexmark generator
// that decide its events.
type nexmarkGenFlags struct {
	fs        *pflag.FlagSet
	seed      uint64
	eventRate float64
	startTime int64
}

func (g *nexmarkGenFlags) register(fs *pflag.FlagSet) {
	g.fs = fs
	fs.Uint64Var(&g.seed, "seed", 1, "seed of the generated events")
	fs.Float64Var(&g.eventRate, "event-rate", 1_000_000, "events per second of event time: events are 1000/R ms apart, so at a low rate a few events span many windows")
	fs.Int64Var(&g.startTime, "start-time", nexmarkStart, "event time of the first event, in ms since the Unix epoch (0: the wall clock when the generator starts)")
}

// check refuses settings that cannot work with n events (0: unbounded):
// an event-time rate that is not a positive number, or times that the
// JSON-lines form refuses (beyond ±2^53 ms), which the windows could not
// hold either.
func (g *nexmarkGenFlags) check(n int64) error {
	if math.IsNaN(g.eventRate) || math.IsInf(g.eventRate, 0) || g.eventRate <= 0 {
		return fmt.Errorf("--event-rate %s: must be a positive, finite number of events per second", g.fs.Lookup("event-rate").Value)
	}
	if g.startTime > nexmark.MaxJSONInt || g.startTime < -nexmark.MaxJSONInt {
		return fmt.Errorf("--start-time %d: must be within ±2^53 ms", g.startTime)
	}
	if n == 0 {
		return nil
	}
	// The last event opens at (n-1)·1000/R ms; an auction expires at most
	// twice the time of 100 auctions (5000/3 events) after it opens.
	last := float64(g.startTime) + (float64(n)+2*5000/3.0+1)*1000/g.eventRate
	if last > nexmark.MaxJSONInt {
		return fmt.Errorf("--event-rate %s: %d events at this rate reach past 2^53 ms of event time, the most a time may be; raise --event-rate or lower --start-time",
			g.fs.Lookup("event-rate").Value, n)
	}
	return nil
}

// gen is the generator of n events (0: unbounded) at rate events per
// second of wall time (0: unpaced, with the flags' event times).
func (g *nexmarkGenFlags) gen(n int64, rate float64) gen.Nexmark {
	return gen.Nexmark{Events: n, Rate: rate, Seed: g.seed, StartTime: g.startTime, EventTimeRate: g.eventRate}
}

func genNexmarkCmd() *cobra.Command {
	var (
		gf     nexmarkGenFlags
		events string
		out    string
	)
	cmd := &cobra.Command{
		Use:   "nexmark",
		Short: "Write generated Nexmark events as JSON lines",
		Long: `Writes --events events of the built-in Nexmark generator (connector/gen's
Nexmark: 1 person, 3 auctions and 46 bids in every 50 events) to --out, one
JSON object per line, in the order generated:

  {"kind":"person","id":…,"name":…,"emailAddress":…,"creditCard":…,"city":…,"state":…,"dateTime":…,"extra":…}
  {"kind":"auction","id":…,"itemName":…,"description":…,"initialBid":…,"reserve":…,"dateTime":…,"expires":…,"seller":…,"category":…,"extra":…}
  {"kind":"bid","auction":…,"bidder":…,"price":…,"channel":…,"url":…,"dateTime":…,"extra":…}

Numbers are JSON integers, times milliseconds since the Unix epoch. The same
flags write the same file. weir run nexmark --input reads it.

  weir gen nexmark --events 100000 --event-rate 1000 --out events.jsonl   # 100 s of event time`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			n, isNum, err := parseCount("events", events, "events")
			switch {
			case err != nil:
				return err
			case events == "":
				return fmt.Errorf("--events is required: the number of events to write")
			case !isNum || n == 0:
				return fmt.Errorf("--events %s: want a positive number of events", events)
			case out == "":
				return fmt.Errorf("--out is required: the file to write, or - for standard output")
			}
			if err := gf.check(n); err != nil {
				return err
			}
			return genNexmark(gf.gen(n, 0), out)
		},
	}
	gf.register(cmd.Flags())
	cmd.Flags().StringVar(&events, "events", "", "number of events to write")
	cmd.Flags().StringVar(&out, "out", "", "JSON-lines `FILE` to write (- for standard output)")
	return cmd
}

func genNexmark(g gen.Nexmark, out string) error {
	var w io.Writer = os.Stdout
	where := "standard output"
	if out != stdinPath {
		var ps paths
		ps.output("--out", out, true)
		if err := ps.check(); err != nil {
			return err
		}
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w, where = f, out
	}
	start := time.Now()
	c, err := nexmark.WriteJSON(w, g)
	if err != nil {
		return fmt.Errorf("--out %s: %v", out, err)
	}
	if f, ok := w.(*os.File); ok && f != os.Stdout {
		if err := f.Close(); err != nil {
			return fmt.Errorf("--out %s: %v", out, err)
		}
	}
	span := float64(c.Total()) / g.EventTimeRate
	fmt.Fprintf(os.Stderr, "nexmark: %d events (%d persons, %d auctions, %d bids) over %.1fs of event time from %d ms, written to %s in %.2fs\n",
		c.Total(), c.Persons, c.Auctions, c.Bids, span, g.StartTime, where, time.Since(start).Seconds())
	return nil
}
