package ds2

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// band is a band without width: par at every utilization.
func band(par ...int) Band {
	return Band{Sizing: Sizing{Parallelism: par, Max: make([]int, len(par))}, Up: par, Down: par}
}

// The warm-up is ignored; an increase needs Activation intervals in a row
// and takes the fewest asked for; a decrease needs DownWindow intervals
// of two or more fewer, none while catching up, and keeps the most asked
// for; a decrease of one is never taken; over-provisioning adds its share.
func TestDeciderPolicy(t *testing.T) {
	d, err := NewDecider(Policy{WarmUp: 1, Activation: 2, DownWindow: 3, Utilization: 1}, []int{4})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		ask        int
		catchingUp bool
		want       int
		changed    bool
	}{
		{9, false, 4, false}, // warm-up
		{8, false, 4, false}, // one interval asks for more
		{6, false, 6, true},  // two in a row: the fewer
		{9, false, 6, false}, // warm-up after the change
		{5, false, 6, false}, // a decrease of one
		{5, false, 6, false},
		{5, false, 6, false},
		{5, false, 6, false},
		{3, true, 6, false}, // catching up
		{4, true, 6, false},
		{2, true, 6, false},
		{3, false, 6, false}, // the window still holds intervals that caught up
		{4, false, 6, false},
		{2, false, 4, true}, // three intervals of two or more fewer: the most of them
	}
	for i, s := range steps {
		got, changed := d.Step(band(s.ask), s.catchingUp)
		if got[0] != s.want || changed != s.changed {
			t.Fatalf("step %d (ask %d): %v, changed %v; want %d, %v", i, s.ask, got, changed, s.want, s.changed)
		}
	}
	d, _ = NewDecider(Policy{Activation: 1, DownWindow: 1, OverProvision: 0.25, Utilization: 1}, []int{1, 1})
	s := band(4, 5)
	s.Max[1] = 6
	if got, _ := d.Step(s, false); !reflect.DeepEqual(got, []int{5, 6}) {
		t.Errorf("4 and 5 over-provisioned by a quarter, the second at most 6: %v; want [5 6]", got)
	}
}

// The band's edges decide whether to act, the target how far: an
// operator at 4 whose target is 5 but whose top edge is 4 stays; one
// whose top edge is 5 goes to the target, 6.
func TestDeciderBandEdges(t *testing.T) {
	d, _ := NewDecider(Policy{Activation: 1, DownWindow: 1, Utilization: 0.8, Boundary: 0.1}, []int{4})
	b := Band{Sizing: Sizing{Parallelism: []int{5}}, Up: []int{4}, Down: []int{3}}
	if got, changed := d.Step(b, false); changed || got[0] != 4 {
		t.Errorf("inside the band: %v, changed %v", got, changed)
	}
	b = Band{Sizing: Sizing{Parallelism: []int{6}}, Up: []int{5}, Down: []int{5}}
	if got, changed := d.Step(b, false); !changed || got[0] != 6 {
		t.Errorf("above the band's top: %v, changed %v; want 6", got, changed)
	}
}

// A hot key group whose sizing at the band's top asks for more than at
// its target never shrinks the operator through the rule for growing,
// nor reports changes that change nothing; an operator that processed
// nothing keeps its instances whatever the over-provisioning.
func TestDeciderHotAndUnmeasured(t *testing.T) {
	counts := []float64{85, 50, 50, 50, 50, 50, 50, 50, 50}
	ops := []Operator{{Source: true, Target: 485, Instances: 1},
		{Upstream: []int{0}, Instances: 8, Processing: 800, Output: 800, KeyGroups: counts},
		{Upstream: []int{1}, Instances: 3}}
	for _, over := range []float64{0, 0.2} {
		pol := DefaultPolicy
		pol.WarmUp, pol.OverProvision = 0, over
		d, _ := NewDecider(pol, []int{1, 8, 3})
		ops[1].Instances, ops[1].Processing = 8, 800
		for i := range 50 {
			b, err := pol.Size(ops)
			if err != nil {
				t.Fatal(err)
			}
			got, changed := d.Step(b, false)
			if got[1] < 8 || got[2] != 3 || changed && got[1] == ops[1].Instances {
				t.Fatalf("over-provisioning %v, interval %d: %v (changed %v) from [1 %d 3]; band %+v", over, i, got, changed, ops[1].Instances, b)
			}
			ops[1].Instances, ops[1].Processing = got[1], 100*float64(got[1])
		}
	}
}

func TestPolicyRefused(t *testing.T) {
	for _, c := range []struct {
		p    Policy
		want string
	}{
		{Policy{WarmUp: -1, Activation: 1, DownWindow: 1, Utilization: 1}, "warm-up"},
		{Policy{Activation: 0, DownWindow: 1, Utilization: 1}, "activation"},
		{Policy{Activation: 3, DownWindow: 2, Utilization: 1}, "scale-down window"},
		{Policy{Activation: 1, DownWindow: 1, OverProvision: -0.5, Utilization: 1}, "over-provisioning"},
		{Policy{Activation: 1, DownWindow: 1}, "target utilization"},
		{Policy{Activation: 1, DownWindow: 1, Utilization: 1.2}, "target utilization"},
		{Policy{Activation: 1, DownWindow: 1, Utilization: 0.5, Boundary: 0.5}, "boundary"},
	} {
		if _, err := NewDecider(c.p, []int{1}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want an error with %q", c.p, err, c.want)
		}
	}
	if _, err := NewDecider(DefaultPolicy, []int{0}); err == nil {
		t.Error("a decider over an operator of 0 instances")
	}
}

// pipeline is a job whose optimum follows from arithmetic: a source, then
// operators each with a fixed time per record (an instance serves
// capacity records a second) and a selectivity, the last keyed over
// equal key groups. Its true rates do not depend on its parallelism.
type pipeline struct {
	capacity, selectivity []float64
	keyGroups             int
}

// measure is one interval's operators at par, for a source rate, with
// every true rate off by up to noise (a share).
func (p pipeline) measure(par []int, rate, noise float64, rng *rand.Rand) []Operator {
	ops := []Operator{{Name: "src", Source: true, Target: rate, Instances: 1}}
	for i, c := range p.capacity {
		f := 1 + noise*(2*rng.Float64()-1)
		op := Operator{Upstream: []int{i}, Instances: par[i+1], Processing: c * f * float64(par[i+1])}
		op.Output = op.Processing * p.selectivity[i]
		if i == len(p.capacity)-1 {
			op.KeyGroups = make([]float64, p.keyGroups)
			for g := range op.KeyGroups {
				op.KeyGroups[g] = 1000
			}
		}
		ops = append(ops, op)
	}
	return ops
}

// optimal is the fewest instances of each operator that sustain rate
// with every instance at most at utilization u, from arithmetic alone.
func (p pipeline) optimal(rate, u float64) []int {
	out := []int{1}
	in := rate
	for i, c := range p.capacity {
		n := 1
		for float64(n)*c*u < in*(1-1e-9) {
			n++
		}
		out = append(out, n)
		in *= p.selectivity[i]
	}
	return out
}

// After every rate step the decider reaches, within three decisions, a
// parallelism inside the policy's band (the fewest instances that stay
// under its upper utilization, at most one more than the fewest under
// its lower one), with true rates off by up to 3 %; the same inputs give
// every decider the same decisions.
func TestDeciderConverges(t *testing.T) {
	p := pipeline{capacity: []float64{1000, 1500, 700}, selectivity: []float64{2, 0.5, 1}, keyGroups: 128}
	for _, pol := range []Policy{{WarmUp: 1, Activation: 1, DownWindow: 3, Utilization: 1}, DefaultPolicy} {
		par := []int{1, 1, 1, 1}
		a, _ := NewDecider(pol, par)
		b, _ := NewDecider(pol, par)
		rng := rand.New(rand.NewPCG(1, 2))
		for _, rate := range []float64{1100, 5300, 2150, 12400, 3200, 3200} {
			lo, hi := p.optimal(rate, min(1, pol.Utilization+pol.Boundary)), p.optimal(rate, pol.Utilization-pol.Boundary)
			decisions := 0
			for range 40 {
				s, err := pol.Size(p.measure(par, rate, 0.03, rng))
				if err != nil {
					t.Fatal(err)
				}
				next, changed := a.Step(s, false)
				if other, _ := b.Step(s, false); !reflect.DeepEqual(next, other) {
					t.Fatalf("two deciders on the same sizings: %v and %v", next, other)
				}
				if changed {
					decisions++
					par = next
				}
			}
			for i := range par {
				if par[i] < lo[i] || par[i] > hi[i]+1 {
					t.Errorf("%+v, rate %v: %v after %d decisions; want from %v to %v plus one", pol, rate, par, decisions, lo, hi)
				}
			}
			if decisions > 3 {
				t.Errorf("%+v, rate %v: %d decisions to converge", pol, rate, decisions)
			}
		}
	}
}

// Over a long steady run whose true rates wander by up to 10 % an
// interval, a job started at the parallelism its policy plans for its
// mean rates never changes, at rates that put the plain DS2 sizing on a
// boundary.
func TestDeciderSteady(t *testing.T) {
	p := pipeline{capacity: []float64{1000, 1500, 700}, selectivity: []float64{2, 0.5, 1}, keyGroups: 128}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, rate := range []float64{990, 2000, 2950, 7000} {
		par := p.optimal(rate, DefaultPolicy.Utilization)
		d, _ := NewDecider(DefaultPolicy, par)
		for n := range 100000 {
			s, _ := DefaultPolicy.Size(p.measure(par, rate, 0.1, rng))
			if next, changed := d.Step(s, false); changed {
				t.Fatalf("rate %v: from %v to %v at interval %d of a steady run", rate, par, next, n)
			}
		}
	}
}
