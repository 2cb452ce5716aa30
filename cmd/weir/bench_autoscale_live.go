package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/weirstream/weir"
)

// liveAutoscale is weir bench autoscale without --simulate: a job of
// fixed service time per record, read at rate steps, sizes itself.
type liveAutoscale struct {
	service    time.Duration
	step       time.Duration
	steady     time.Duration
	sweep      time.Duration
	maxWorkers int
	start      int
	interval   time.Duration
	every      int
	keys       int
	strategy   string
	perPair    int
	query      string // service, q5, q8 or q11
}

// liveDefaultRates are the live experiment's rate steps, records a
// second: about 0.7, 3.3, 1.5, 6.2 and 1.1 instances' worth at a 2 ms
// service time.
const liveDefaultRates = "300,1500,700,2800,500"

func (l *liveAutoscale) check() error {
	if _, ok := liveQueries[l.query]; !ok {
		return fmt.Errorf("--query %q: want service, q5, q8 or q11", l.query)
	}
	switch {
	case l.service <= 0 || l.service > time.Second:
		return fmt.Errorf("--service %v: want above 0 and at most 1s", l.service)
	case l.step < 5*l.interval*time.Duration(l.every) || l.steady < 0 || l.sweep < time.Second:
		return fmt.Errorf("--step %v (at least five policy intervals, %v), --steady %v (0 or more) and --sweep %v (at least 1s)", l.step, 5*l.interval*time.Duration(l.every), l.steady, l.sweep)
	case l.maxWorkers < 1 || l.maxWorkers > 256 || l.start < 1 || l.start > l.maxWorkers:
		return fmt.Errorf("--max-workers %d and --start-workers %d: want 1 <= start <= max <= 256", l.maxWorkers, l.start)
	case l.interval < time.Millisecond || l.every < 1:
		return fmt.Errorf("--batch-interval %v (at least 1ms) and --every %d (at least 1)", l.interval, l.every)
	case l.keys < 1 || l.keys > 1<<20:
		return fmt.Errorf("--keys %d: want 1 to %d", l.keys, 1<<20)
	case l.perPair < 1:
		return fmt.Errorf("--per-pair %d: want at least 1", l.perPair)
	}
	_, err := weir.ParseRescaleStrategy(l.strategy)
	return err
}

// sweepResult is what the sweep of fixed parallelisms found for a rate.
type sweepResult struct {
	rate    float64
	optimal int           // the fewest instances that kept up
	cost    time.Duration // a record's measured service time
	runs    map[int]bool  // instances -> kept up
	lag     map[int]float64
}

// sweepOne runs the job at rate with p instances for l.sweep and says
// whether it kept up (it ended within 2 % and 100 ms of its input's
// schedule: one short of the capacity by more than about 4 % ends later
// at the default 6 s) and what a record cost.
func (l *liveAutoscale) sweepOne(ctx context.Context, rate float64, p int) (bool, float64, time.Duration, error) {
	n := int64(rate * l.sweep.Seconds())
	clk := steadyClock(rate)
	r, err := l.newRun(n, rate, clk, weir.Workers(p), weir.BatchInterval(l.interval), weir.BatchSize(16), weir.Logger(quietLogger()))
	if err == nil {
		err = runLive(ctx, r)
	}
	if err != nil {
		return false, 0, 0, fmt.Errorf("bench autoscale: the sweep at %v records/s on %d instances: %w", rate, p, err)
	}
	lag := time.Since(clk.start) - l.sweep
	cost := serviceCost(r)
	if cost <= 0 {
		return false, 0, 0, fmt.Errorf("bench autoscale: the sweep at %v records/s on %d instances: no instance of %s took any time", rate, p, r.Costed())
	}
	return lag <= l.sweep*2/100+100*time.Millisecond, lag.Seconds(), cost, nil
}

// sweepRate finds the fewest instances, from 1 to --max-workers, that
// keep up with rate: from what cost (a record's service time measured
// before) says, down while they keep up and up while they do not.
func (l *liveAutoscale) sweepRate(ctx context.Context, rate float64, cost time.Duration) (sweepResult, error) {
	res := sweepResult{rate: rate, runs: map[int]bool{}, lag: map[int]float64{}}
	var costs []time.Duration
	try := func(p int) (bool, error) {
		if ok, seen := res.runs[p]; seen {
			return ok, nil
		}
		ok, lag, c, err := l.sweepOne(ctx, rate, p)
		res.runs[p], res.lag[p] = ok, lag
		if c > 0 {
			costs = append(costs, c)
		}
		return ok, err
	}
	p := min(l.maxWorkers, max(1, int(math.Ceil(rate*cost.Seconds()))))
	ok, err := try(p)
	if ok {
		// Down while they keep up: the fewest is the last that did.
		for err == nil && ok && p > 1 {
			p--
			ok, err = try(p)
		}
	} else {
		for err == nil && !ok && p < l.maxWorkers {
			p++
			ok, err = try(p)
		}
	}
	if err != nil {
		return res, err
	}
	for q := 1; q <= l.maxWorkers; q++ {
		if res.runs[q] {
			res.optimal = q
			break
		}
	}
	slices.Sort(costs)
	if len(costs) > 0 {
		res.cost = costs[len(costs)/2]
	}
	return res, nil
}

// run is the live experiment: the sweep at each rate, then one job that
// sizes itself through the rate steps and a steady run at the last.
func (l *liveAutoscale) run(ctx context.Context, b *autoscaleBench, rates []float64) error {
	if err := l.check(); err != nil {
		return err
	}
	// A record's service time, measured on every instance at the top
	// rate, guides the sweep; the sweep's runs decide.
	top := slices.Max(rates)
	_, _, cost, err := l.sweepOne(ctx, top, l.maxWorkers)
	if err != nil {
		return err
	}
	sweeps := make([]sweepResult, len(rates))
	for i, r := range rates {
		if sweeps[i], err = l.sweepRate(ctx, r, cost); err != nil {
			return err
		}
	}
	steps := make([]rateStep, len(rates))
	var n float64
	for i, r := range rates {
		steps[i] = rateStep{rate: r, len: l.step}
		n += r * l.step.Seconds()
	}
	n += rates[len(rates)-1] * l.steady.Seconds()
	pol := weir.AutoscalePolicy{Every: l.every, WarmUp: b.policy.WarmUp, Activation: b.policy.Activation, DownWindow: b.policy.DownWindow,
		Utilization: b.policy.Utilization, Boundary: b.policy.Boundary, OverProvision: b.policy.OverProvision}
	strategy, err := weir.ParseRescaleStrategy(l.strategy)
	if err != nil {
		return err
	}
	log := &epochLog{}
	clk := &clock{start: time.Now(), steps: steps}
	r, err := l.newRun(int64(n), n/(l.step.Seconds()*float64(len(rates))+l.steady.Seconds()), clk, weir.Workers(l.maxWorkers), weir.ActiveInstances(l.start),
		weir.BatchInterval(l.interval), weir.BatchSize(16), weir.Logger(quietLogger()), log.option(), weir.Autoscale(pol, weir.WithStrategy(strategy), weir.PerPair(l.perPair)))
	if err != nil {
		return err
	}
	if err := r.Job().Run(ctx); err != nil {
		return fmt.Errorf("bench autoscale: the job that sizes itself: %w", err)
	}
	checkErr := r.Check()
	ds, stopped := r.Job().ScaleDecisions()
	if err := l.report(b, sweeps, clk.start, log, ds, stopped, checkErr == nil); err != nil {
		return err
	}
	if checkErr != nil {
		return fmt.Errorf("bench autoscale: the job that sized itself counted wrong: %w", checkErr)
	}
	return nil
}

// report prints a line per rate step and one for the steady run.
func (l *liveAutoscale) report(b *autoscaleBench, sweeps []sweepResult, start time.Time, log *epochLog, ds []weir.ScaleDecision, stopped error, checked bool) error {
	enc := json.NewEncoder(os.Stdout)
	p := b.policy
	cur := l.start
	stepStart := start
	at := make([]time.Time, len(ds))
	for i, d := range ds {
		at[i] = log.when(d.Epoch)
	}
	for _, s := range sweeps {
		end := stepStart.Add(l.step)
		var decisions []int
		hot := []string{}
		last := stepStart
		for k, d := range ds {
			if !at[k].Before(stepStart) && at[k].Before(end) {
				decisions, last = append(decisions, d.To), at[k]
				hot = append(hot, d.Hot...)
			}
			// The parallelism in force: a decision counts once its
			// table runs its instances.
			if d.InForce > 0 && log.when(d.InForce).Before(end) {
				cur = d.To
			}
		}
		// The band, from the sweep's service time: the fewest instances
		// at the band's top utilization and at its bottom, one more
		// above (a decrease of one is never taken), over-provisioned.
		need := s.rate * s.cost.Seconds()
		prov := func(u float64) int {
			return max(1, int(math.Ceil(math.Ceil(need/u-1e-9)*(1+p.OverProvision)-1e-9)))
		}
		lo, hi := prov(min(1, p.Utilization+p.Boundary)), prov(p.Utilization-p.Boundary)+1
		around := last.Add(3 * time.Second)
		if len(decisions) == 0 {
			around = stepStart.Add(5 * time.Second)
		}
		line := map[string]any{"query": l.query, "service_ms": ms(l.service), "rate": s.rate, "decisions": decisions, "steps": len(decisions),
			"final": cur, "optimal": s.optimal, "sweep": l.sweepLine(s), "band": []int{lo, hi}, "in_band": cur >= lo && cur <= hi, "hot": hot,
			"latency_ms": map[string]any{"before": latencySummary(log.latencies(stepStart.Add(-5*time.Second), stepStart)),
				"during": latencySummary(log.latencies(stepStart, around)), "after": latencySummary(log.latencies(around, end))},
			"checked": checked}
		if err := enc.Encode(line); err != nil {
			return err
		}
		stepStart = end
	}
	changes := 0
	for k, d := range ds {
		if !at[k].Before(stepStart) {
			changes++
		}
		if d.InForce > 0 {
			cur = d.To
		}
	}
	steady := map[string]any{"query": l.query, "steady_s": l.steady.Seconds(), "rate": sweeps[len(sweeps)-1].rate, "changes": changes, "final": cur,
		"latency_ms": latencySummary(log.latencies(stepStart, stepStart.Add(l.steady))), "checked": checked}
	if stopped != nil {
		steady["stopped"] = stopped.Error()
	}
	return enc.Encode(steady)
}

// sweepLine is the sweep's runs: instances, whether they kept up and by
// how many seconds they ended behind the schedule.
func (l *liveAutoscale) sweepLine(s sweepResult) []map[string]any {
	var out []map[string]any
	for q := 1; q <= l.maxWorkers; q++ {
		if ok, seen := s.runs[q]; seen {
			out = append(out, map[string]any{"instances": q, "kept_up": ok, "lag_s": s.lag[q]})
		}
	}
	return out
}
