package scalesim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/weirstream/weir/internal/ds2"
)

// Step is what the planners did after the source rate changed.
type Step struct {
	Rate float64
	// Decisions is the parallelism (the source first) after each change.
	Decisions [][]int
	// Final is the parallelism once the decider has been still for a
	// while (or after the step's last interval); Optimal the sweep's.
	Final, Optimal []int
	// Feasible is false when a key group alone is above one instance's
	// capacity at the optimum's utilization; Hot names the key groups
	// the last sizing found so.
	Feasible bool
	Hot      []ds2.Hot
	// Intervals is how many intervals the step took.
	Intervals int
}

// Run starts every operator at start (nil: one instance each), then for
// each rate lets the decider act on sizings of measured rates until no
// change could come any more for a full scale-down window (at most
// intervals intervals a step).
func (m Model) Run(p ds2.Policy, start []int, rates []float64, intervals int) ([]Step, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	if start == nil {
		start = make([]int, len(m.Ops)+1)
		for i := range start {
			start[i] = 1
		}
	}
	if len(start) != len(m.Ops)+1 {
		return nil, fmt.Errorf("scalesim: %d starting parallelisms for %d operators and the source", len(start), len(m.Ops))
	}
	d, err := ds2.NewDecider(p, start)
	if err != nil {
		return nil, err
	}
	shares := m.allShares()
	rng := rand.New(rand.NewPCG(m.Seed, 7))
	still := p.WarmUp + p.DownWindow + 1
	par := slices.Clone(start)
	var out []Step
	for _, rate := range rates {
		st := Step{Rate: rate}
		st.Optimal, st.Feasible = m.Optimal(rate, p.Utilization)
		quiet := 0
		for st.Intervals < intervals && quiet < still {
			st.Intervals++
			b, err := p.Size(m.measure(par, rate, shares, rng))
			if err != nil {
				return nil, err
			}
			st.Hot = b.Hot
			next, changed := d.Step(b, false)
			if changed {
				par, quiet = next, 0
				st.Decisions = append(st.Decisions, slices.Clone(next))
			} else {
				quiet++
			}
		}
		st.Final = slices.Clone(par)
		out = append(out, st)
	}
	return out, nil
}

// Steady runs intervals intervals at one rate from the parallelism the
// policy plans for its noiseless figures (over-provisioned as the policy
// says) and returns how many times the parallelism changed.
func (m Model) Steady(p ds2.Policy, rate float64, intervals int) (int, []int, error) {
	if err := m.Check(); err != nil {
		return 0, nil, err
	}
	shares := m.allShares()
	rng := rand.New(rand.NewPCG(m.Seed, 9))
	// The plan for the rate's noiseless figures.
	b, err := p.Size(Model{Ops: m.Ops, Seed: m.Seed}.measure(m.ones(), rate, shares, rng))
	if err != nil {
		return 0, nil, err
	}
	// As the policy provisions it.
	par := make([]int, len(b.Parallelism))
	for i, n := range b.Parallelism {
		par[i] = max(1, int(math.Ceil(float64(n)*(1+p.OverProvision)-1e-9)))
	}
	d, err := ds2.NewDecider(p, par)
	if err != nil {
		return 0, nil, err
	}
	changes := 0
	for range intervals {
		b, err := p.Size(m.measure(par, rate, shares, rng))
		if err != nil {
			return 0, nil, err
		}
		if next, changed := d.Step(b, false); changed {
			par, changes = next, changes+1
		}
	}
	return changes, par, nil
}

func (m Model) allShares() [][]float64 {
	out := make([][]float64, len(m.Ops))
	for i, op := range m.Ops {
		out[i] = op.shares(m.Seed + uint64(i))
	}
	return out
}

func (m Model) ones() []int {
	out := make([]int, len(m.Ops)+1)
	for i := range out {
		out[i] = 1
	}
	return out
}
