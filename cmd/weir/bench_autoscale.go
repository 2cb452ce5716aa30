package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir/internal/ds2"
	"github.com/weirstream/weir/internal/scalesim"
)

// autoscaleBench is one weir bench autoscale.
type autoscaleBench struct {
	simulate       bool
	rates          string
	keyGroups      int
	skew, noise    float64
	steady         int
	interval       time.Duration
	problems       int
	seed           uint64
	policy         ds2.Policy
	stepIntervals  int
	placementSizes string
	live           liveAutoscale
}

func benchAutoscaleCmd() *cobra.Command {
	b := autoscaleBench{policy: ds2.DefaultPolicy}
	cmd := &cobra.Command{
		Use:   "autoscale",
		Short: "Sizing (DS2) and placement planners over rate steps; prints one JSON line per step",
		Long: `With --simulate it runs the real planners over a pipeline that exists only
as a cost model (a source, a parse of 50 k records a second an instance, a
keyed window of 100 k over --key-groups key groups of Zipf(--s) shares
that passes on 1 %, a sink of 2 k), whose true rates stray by --noise
each interval: for each rate of --rates, the decider acts on the sizings
until it has been still for a scale-down window, and a line gives the
parallelism after each decision (source, parse, window, sink), their
count, the final one and the optimum from the model alone (input over
capacity, and for the keyed window a sweep of fixed parallelisms placed
by the placement heuristic; not from the sizing), and whether the final
one lies in the policy's band around it (over-provisioned as the policy
says, and one more, a decrease of one not being taken; null when a key
group alone is above an instance's capacity and no parallelism serves
the rate, whose optimum entry is then 0). Then a steady run of
--steady-intervals intervals at each rate counts the changes; the
placement heuristic against branch and bound on --problems small random
problems; and rescales of skewed key groups (--placement, "" for none)
with and without the cost of moving state.

The live experiment, on a running job, is not built yet: --simulate is
required.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !b.simulate {
				if b.rates == "" {
					b.rates = liveRates(b.live.query)
				}
				rates, err := parseRates(b.rates)
				if err != nil {
					return err
				}
				if err := b.policy.Check(); err != nil {
					return fmt.Errorf("bench autoscale: %w", err)
				}
				return b.live.run(cmd.Context(), &b, rates)
			}
			if b.rates == "" {
				b.rates = simulateDefaultRates
			}
			return b.runSimulation()
		},
	}
	f := cmd.Flags()
	f.BoolVar(&b.simulate, "simulate", false, "run the planners over a cost model instead of a job")
	f.StringVar(&b.rates, "rates", "", "source rates, records a second, one step each (default "+liveDefaultRates+", with --simulate "+simulateDefaultRates+")")
	f.StringVar(&b.live.query, "query", "service", "the live job: service (a count), or Nexmark's q5, q8 or q11 with the service time in its first keyed aggregation (--rates are then events a second, and each query has default steps of its own, under its hot key group's capacity)")
	f.DurationVar(&b.live.service, "service", 2*time.Millisecond, "the keyed operator's time a record (a sleep), live")
	f.DurationVar(&b.live.step, "step", 30*time.Second, "each rate step's length, live")
	f.DurationVar(&b.live.steady, "steady", 60*time.Second, "the steady run at the last rate after the steps, live")
	f.DurationVar(&b.live.sweep, "sweep", 6*time.Second, "each run of the sweep of fixed parallelisms, live")
	f.IntVar(&b.live.maxWorkers, "max-workers", 10, "the most instances the keyed operator may have, live")
	f.IntVar(&b.live.start, "start-workers", 1, "the keyed operator's instances at start, live")
	f.DurationVar(&b.live.interval, "batch-interval", 100*time.Millisecond, "an epoch's length, live")
	f.IntVar(&b.live.every, "every", 10, "epochs of a policy interval, live")
	f.IntVar(&b.live.keys, "keys", 4096, "keys of the keyed operator, live")
	f.StringVar(&b.live.strategy, "strategy", "batched", "how the decisions' rescales move key groups (batched, all-at-once, fluid), live")
	f.IntVar(&b.live.perPair, "per-pair", 8, "key groups one step of a batched rescale hands from one instance to another, live")
	f.IntVar(&b.keyGroups, "key-groups", 4096, "key groups of the keyed window")
	f.Float64Var(&b.skew, "s", 0.3, "Zipf exponent of the key groups' shares (0: equal)")
	f.Float64Var(&b.noise, "noise", 0.05, "how far measured rates stray each interval (a share)")
	f.IntVar(&b.stepIntervals, "step-intervals", 200, "most policy intervals a rate step may take")
	f.IntVar(&b.steady, "steady-intervals", 5000, "intervals of the steady run at each rate")
	f.DurationVar(&b.interval, "policy-interval", 10*time.Second, "the policy interval the steady run stands for (its length in hours is reported)")
	f.IntVar(&b.problems, "problems", 300, "small placement problems solved by the heuristic and exactly")
	f.StringVar(&b.placementSizes, "placement", "128:4:5,1024:8:6,4096:16:64,32768:1024:768", "rescales to place, key-groups:from:to each")
	f.Uint64Var(&b.seed, "seed", 1, "seed of the noise and the problems")
	f.Float64Var(&b.policy.Utilization, "target-utilization", b.policy.Utilization, "share of an instance's true rate the sizings plan for")
	f.Float64Var(&b.policy.Boundary, "utilization-boundary", b.policy.Boundary, "band around the target inside which nothing changes")
	f.IntVar(&b.policy.WarmUp, "warm-up", b.policy.WarmUp, "intervals ignored after a change")
	f.IntVar(&b.policy.Activation, "activation", b.policy.Activation, "intervals in a row that must ask for more instances")
	f.IntVar(&b.policy.DownWindow, "down-window", b.policy.DownWindow, "intervals in a row that must ask for fewer instances")
	f.Float64Var(&b.policy.OverProvision, "over-provision", b.policy.OverProvision, "share of instances added to each sizing")
	return cmd
}

// simulateDefaultRates are --simulate's rate steps.
const simulateDefaultRates = "1e6,8e6,3e6,20e6,2e6"

// model is the simulated pipeline.
func (b *autoscaleBench) model() scalesim.Model {
	return scalesim.Model{Ops: []scalesim.Op{
		{Name: "parse", Capacity: 50_000, Selectivity: 1},
		{Name: "window", Capacity: 100_000, Selectivity: 0.01, KeyGroups: b.keyGroups, Skew: b.skew},
		{Name: "sink", Capacity: 2_000},
	}, Noise: b.noise, Seed: b.seed}
}

// parseRates reads --rates.
func parseRates(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(r > 0) || r > 1e12 {
			return nil, fmt.Errorf("--rates %q: %q is not a rate from above 0 to 1e12 records a second", s, f)
		}
		out = append(out, r)
	}
	return out, nil
}

// parseSizes reads --placement.
func parseSizes(s string) ([][3]int, error) {
	var out [][3]int
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, f := range strings.Split(s, ",") {
		parts := strings.Split(strings.TrimSpace(f), ":")
		var v [3]int
		ok := len(parts) == 3
		for i := 0; ok && i < 3; i++ {
			n, err := strconv.Atoi(parts[i])
			v[i], ok = n, err == nil && n > 0
		}
		if !ok || v[0] > 1<<15 || v[1] > v[0] || v[2] > v[0] {
			return nil, fmt.Errorf("--placement %q: %q is not key-groups:from:to with at most %d key groups, from and to from 1 to the key groups", s, f, 1<<15)
		}
		out = append(out, v)
	}
	return out, nil
}

func (b *autoscaleBench) check() ([]float64, [][3]int, error) {
	switch {
	case b.keyGroups < 1 || b.keyGroups > 1<<15:
		return nil, nil, fmt.Errorf("--key-groups %d: want 1 to %d", b.keyGroups, 1<<15)
	case !(b.skew >= 0 && b.skew <= 5):
		return nil, nil, fmt.Errorf("--s %v: want 0 to 5", b.skew)
	case b.steady < 0 || b.problems < 0 || b.stepIntervals < 1:
		return nil, nil, fmt.Errorf("--steady-intervals %d, --problems %d and --step-intervals %d: want 0 or more (the last at least 1)", b.steady, b.problems, b.stepIntervals)
	case b.interval <= 0:
		return nil, nil, fmt.Errorf("--policy-interval %v: must be positive", b.interval)
	}
	if err := b.policy.Check(); err != nil {
		return nil, nil, fmt.Errorf("bench autoscale: %w", err)
	}
	if err := b.model().Check(); err != nil {
		return nil, nil, fmt.Errorf("bench autoscale: %w", err)
	}
	rates, err := parseRates(b.rates)
	if err != nil {
		return nil, nil, err
	}
	sizes, err := parseSizes(b.placementSizes)
	return rates, sizes, err
}

func (b *autoscaleBench) runSimulation() error {
	rates, sizes, err := b.check()
	if err != nil {
		return err
	}
	m, p := b.model(), b.policy
	enc := json.NewEncoder(os.Stdout)
	steps, err := m.Run(p, nil, rates, b.stepIntervals)
	if err != nil {
		return err
	}
	for _, st := range steps {
		// The band around the optimum, over-provisioned as the policy
		// says; one more above it is a decrease of one, never taken.
		lo, _ := m.Optimal(st.Rate, min(1, p.Utilization+p.Boundary))
		hi, _ := m.Optimal(st.Rate, p.Utilization-p.Boundary)
		var inBand any = true
		for i := range st.Final {
			prov := func(n int) int { return max(1, int(math.Ceil(float64(n)*(1+p.OverProvision)-1e-9))) }
			inBand = inBand == true && st.Final[i] >= prov(lo[i]) && st.Final[i] <= prov(hi[i])+1
		}
		if !st.Feasible {
			inBand = nil // no parallelism serves the rate
		}
		hot := make([]string, 0, len(st.Hot))
		for _, h := range st.Hot {
			hot = append(hot, fmt.Sprintf("key group %d of %s needs %.0f/s, an instance serves %.0f/s", h.KeyGroup, m.Ops[h.Operator-1].Name, h.Need, h.Capacity))
		}
		if err := enc.Encode(map[string]any{"query": "simulate", "rate": st.Rate, "decisions": st.Decisions, "steps": len(st.Decisions),
			"final": st.Final, "optimal": st.Optimal, "instances": sum(st.Final), "optimal_instances": sum(st.Optimal),
			"in_band": inBand, "feasible": st.Feasible, "hot": hot, "intervals": st.Intervals}); err != nil {
			return err
		}
	}
	return b.steadyAndPlacement(m, rates, sizes, enc)
}

func (b *autoscaleBench) steadyAndPlacement(m scalesim.Model, rates []float64, sizes [][3]int, enc *json.Encoder) error {
	if b.steady > 0 {
		for _, r := range rates {
			n, par, err := m.Steady(b.policy, r, b.steady)
			if err != nil {
				return err
			}
			hours := float64(b.steady) * b.interval.Hours()
			if err := enc.Encode(map[string]any{"steady": r, "intervals": b.steady, "hours": hours, "changes": n, "final": par}); err != nil {
				return err
			}
		}
	}
	if b.problems > 0 {
		g, err := scalesim.PlacementGaps(b.problems, b.seed)
		if err != nil {
			return err
		}
		if err := enc.Encode(map[string]any{"placement": "exact", "problems": g.Problems, "solved": g.Solved, "mean_gap": g.Mean, "worst_gap": g.Worst}); err != nil {
			return err
		}
	}
	for _, s := range sizes {
		r, err := scalesim.Rescale(s[0], s[1], s[2], 4, b.skew, b.seed)
		if err != nil {
			return err
		}
		share := func(n int64) float64 { return float64(n) / float64(r.Bytes) }
		if err := enc.Encode(map[string]any{"placement": "rescale", "key_groups": s[0], "from": s[1], "to": s[2],
			"imbalance_before": r.Before, "imbalance": r.With.Imbalance, "moved_share": share(r.With.Moved),
			"imbalance_without_move_cost": r.Without.Imbalance, "moved_share_without_move_cost": share(r.Without.Moved)}); err != nil {
			return err
		}
	}
	return nil
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
