package scalesim

import (
	"testing"

	"github.com/weirstream/weir/internal/ds2"
)

// model is a pipeline of 64 to about 1000 instances over the rates below:
// a parse, a keyed window over skewed key groups, a sink.
func model() Model {
	return Model{Ops: []Op{
		{Name: "parse", Capacity: 50_000, Selectivity: 1},
		{Name: "window", Capacity: 100_000, Selectivity: 0.01, KeyGroups: 1024, Skew: 0.2},
		{Name: "sink", Capacity: 2_000, Selectivity: 0},
	}, Noise: 0.05, Seed: 1}
}

func total(par []int) int {
	n := 0
	for _, p := range par {
		n += p
	}
	return n
}

// After every rate step (about 60 to 900 instances in all) the decider settles
// within three decisions inside the policy's band around the sweep's
// optimum, with every measured rate off by up to 5 %.
func TestRunConverges(t *testing.T) {
	m := model()
	p := ds2.DefaultPolicy
	rates := []float64{1e6, 8e6, 3e6, 20e6, 20e6, 2e6}
	steps, err := m.Run(p, nil, rates, 200)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		lo, _ := m.Optimal(st.Rate, min(1, p.Utilization+p.Boundary))
		hi, _ := m.Optimal(st.Rate, p.Utilization-p.Boundary)
		for i := range st.Final {
			if st.Final[i] < lo[i] || st.Final[i] > hi[i]+1 {
				t.Errorf("rate %v: %v; want from %v to %v plus one (optimum %v)", st.Rate, st.Final, lo, hi, st.Optimal)
				break
			}
		}
		if len(st.Decisions) > 3 || !st.Feasible {
			t.Errorf("rate %v: %d decisions %v, feasible %v", st.Rate, len(st.Decisions), st.Decisions, st.Feasible)
		}
		t.Logf("rate %.0f: %d decisions %v, final %v (%d instances), optimum %v", st.Rate, len(st.Decisions), st.Decisions, st.Final, total(st.Final), st.Optimal)
	}
	if n := total(steps[3].Final); n < 700 || n > 1100 {
		t.Errorf("at 20 M/s the job runs %d instances; the model was meant for about 900", n)
	}
}

// A long steady run with every measured rate off by up to 5 % changes
// nothing, nor does one over-provisioned by a fifth; a key group above an
// instance's capacity is named, and the model's optimum says no
// parallelism serves it.
func TestSteadyAndHot(t *testing.T) {
	m := model()
	for _, rate := range []float64{1e6, 5e6, 17e6} {
		n, par, err := m.Steady(ds2.DefaultPolicy, rate, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("rate %v: %d changes over a steady run, ending at %v", rate, n, par)
		}
		over := ds2.DefaultPolicy
		over.OverProvision = 0.2
		if n, par, _ := m.Steady(over, rate, 300); n != 0 {
			t.Errorf("rate %v, over-provisioned: %d changes over a steady run, ending at %v", rate, n, par)
		}
	}
	m.Ops[1].KeyGroups, m.Ops[1].Skew = 64, 1.2
	steps, err := m.Run(ds2.DefaultPolicy, nil, []float64{4e6}, 50)
	if err != nil {
		t.Fatal(err)
	}
	if st := steps[0]; st.Feasible || len(st.Hot) != 1 || st.Hot[0].Operator != 2 || st.Optimal[2] != 0 {
		t.Errorf("a key group of a fifth of 4 M/s against 100 k/s an instance: feasible %v, hot %+v", st.Feasible, st.Hot)
	}
}
