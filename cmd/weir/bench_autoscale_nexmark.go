package main

import (
	"fmt"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/nexmark"
)

// liveQueries are the live benchmark's jobs: the count of fixed service
// time, and the Nexmark queries with the service time in their first
// keyed aggregation (nexmark.Service), by the chain that aggregation
// heads, with their default rate steps. Nexmark's generator sends half
// the bids to one hot auction, three quarters of them from one hot
// bidder, and gives three quarters of the auctions one hot seller: one
// key group then takes half of the bids q5 folds, three quarters of
// q11's, and in q8, which folds the persons and auctions (8 % of the
// events), the hot seller's auctions (4.5 % of the events). No
// parallelism serves a hot key group beyond one instance, so the default
// steps stay under that: about 0.7 of an instance's worth at 2 ms for
// the hot group at the high steps, where two instances are the fewest
// that keep up.
var liveQueries = map[string]struct {
	costed string
	rates  string
}{
	"service": {serviceKeyed, liveDefaultRates},
	"q5":      {"q5-pane", "200,700,300,700,200"},
	"q8":      {"q8-window", "2000,7000,3000,7000,2000"},
	"q11":     {"q11-session", "150,450,200,450,150"},
}

// liveNexmarkStart is the event time of the live Nexmark runs' first
// event: their results do not depend on the wall clock.
const liveNexmarkStart = 1_700_000_000_000

// liveRates is the default rate steps of query q.
func liveRates(q string) string {
	if lq, ok := liveQueries[q]; ok {
		return lq.rates
	}
	return liveDefaultRates
}

// newRun makes one job of the live benchmark over n records read on
// clk's schedule; rate is their mean rate (a Nexmark run's event times
// advance at it).
func (l *liveAutoscale) newRun(n int64, rate float64, clk *clock, opts ...weir.JobOption) (liveRun, error) {
	if l.query == "service" {
		return newServiceRun(n, uint32(l.keys), l.service, clk, opts...), nil
	}
	return newNexmarkLive(l.query, n, rate, l.service, clk, opts...)
}

// nexmarkLive is a Nexmark query over n generated events, its costed
// aggregation taking service a record, checked against the query's
// plain single-threaded loop (nexmark.Baseline) over the same events.
type nexmarkLive struct {
	job  *weir.Job
	name string
	n    int64
	g    gen.Nexmark
	sum  nexmark.Checksum
}

func newNexmarkLive(name string, n int64, rate float64, service time.Duration, clk *clock, opts ...weir.JobOption) (*nexmarkLive, error) {
	r := &nexmarkLive{name: name, n: n, g: gen.Nexmark{Events: n, Seed: 1, StartTime: liveNexmarkStart, EventTimeRate: max(rate, 1)}}
	// Hash partitioning: each record is folded at its key's instance,
	// where the service time is spent (pre-aggregation would fold it at
	// the source's).
	r.job = weir.NewJob("autoscale-bench-"+name, append(opts, weir.Partitioning("hash"))...)
	src := weir.Source(r.job, "events", scheduled[gen.NexmarkEvent]{in: r.g, c: clk}, weir.Parallelism(1))
	if err := nexmark.Add(name, src, nexmark.Sinks{Sum: &r.sum}, nexmark.Service(service)); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *nexmarkLive) Job() *weir.Job { return r.job }
func (r *nexmarkLive) Costed() string { return liveQueries[r.name].costed }
func (r *nexmarkLive) Read() int64    { return r.n }

func (r *nexmarkLive) Check() error {
	want, n, err := nexmark.Baseline(r.name, r.g)
	if err != nil {
		return err
	}
	if n != r.n || !r.sum.Equal(&want) {
		return fmt.Errorf("%s: %v over %d events; the plain loop's is %v over %d", r.name, &r.sum, r.n, &want, n)
	}
	return nil
}
