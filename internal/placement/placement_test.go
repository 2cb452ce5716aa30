package placement

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// instances are n instances, IDs 0 to n-1, spread over procs processes
// in blocks.
func instances(n, procs int) []Instance {
	out := make([]Instance, n)
	for i := range out {
		out[i] = Instance{ID: i, Process: i * procs / n}
	}
	return out
}

// contiguous is n key groups over the first m instances in ranges.
func contiguous(n, m int) []int {
	out := make([]int, n)
	for k := range out {
		out[k] = k * m / n
	}
	return out
}

// A hand-made cost: two instances on two processes, one key group moved,
// one flow across.
func TestCost(t *testing.T) {
	p := Problem{
		Groups:  []Group{{Load: []float64{3, 1, 2}, Bytes: []int64{10, 30, 60}, Current: []int{0, 0, 1}, Instances: instances(2, 2)}},
		Flows:   []Flow{{From: Unit{0, 0}, To: Unit{0, 2}, Rate: 4}, {From: Unit{0, 1}, To: Unit{0, 0}, Rate: 1}},
		Weights: Weights{Move: 1, Traffic: 1},
	}
	c, err := p.Cost(Assignment{{0, 1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	// Loads 3 and 3 of ideal 3; key group 1 (30 of 100 bytes) moved; both
	// flows (5 of 5) cross.
	if c.Imbalance != 1 || c.Moved != 30 || c.Remote != 5 || math.Abs(c.Total-(1+0.3+1)) > 1e-9 {
		t.Errorf("cost %+v", c)
	}
	if _, err := p.Cost(Assignment{{0, 1, 7}}); err == nil || !strings.Contains(err.Error(), "instance 7") {
		t.Errorf("an owner that is not an instance of the group: %v", err)
	}
}

func TestCheckRefuses(t *testing.T) {
	g := Group{Load: []float64{1}, Instances: instances(1, 1)}
	for _, c := range []struct {
		p    Problem
		want string
	}{
		{Problem{}, "no groups"},
		{Problem{Groups: []Group{{Load: []float64{1}}}}, "no instance"},
		{Problem{Groups: []Group{{Load: []float64{1}, Bytes: []int64{1, 2}, Instances: instances(1, 1)}}}, "2 sizes"},
		{Problem{Groups: []Group{{Load: []float64{math.NaN()}, Instances: instances(1, 1)}}}, "load NaN"},
		{Problem{Groups: []Group{{Load: []float64{1}, Instances: []Instance{{0, 0}, {0, 1}}}}}, "instance 0 twice"},
		{Problem{Groups: []Group{g}, Flows: []Flow{{From: Unit{0, 0}, To: Unit{1, 0}}}}, "no such key group"},
		{Problem{Groups: []Group{g}, Weights: Weights{Move: -1}}, "weights"},
	} {
		if _, err := Heuristic(c.p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want an error with %q", c.p, err, c.want)
		}
	}
}

// small is a random problem small enough to solve exactly: one or two
// groups of 5 to 8 key groups with skewed loads and sizes, placed over 2
// to 4 instances on 2 processes, a rescale from a current assignment over
// 1 to 4 instances, and flows between the groups' key groups.
func small(rng *rand.Rand) Problem {
	var p Problem
	p.Weights = DefaultWeights
	groups := 1 + rng.IntN(2)
	for range groups {
		n := 5 + rng.IntN(4)
		gr := Group{Load: make([]float64, n), Bytes: make([]int64, n), Instances: instances(2+rng.IntN(3), 2)}
		gr.Current = contiguous(n, 1+rng.IntN(4))
		for k := range n {
			gr.Load[k] = math.Floor(100 * math.Pow(rng.Float64(), 2))
			gr.Bytes[k] = int64(1 + rng.IntN(1000))
		}
		p.Groups = append(p.Groups, gr)
	}
	if groups == 2 {
		for k := range min(len(p.Groups[0].Load), len(p.Groups[1].Load)) {
			p.Flows = append(p.Flows, Flow{From: Unit{0, k}, To: Unit{1, k}, Rate: float64(rng.IntN(50))})
		}
	}
	return p
}

// On small problems the heuristic's cost is within 5 % of the least
// possible, on every one of them.
func TestHeuristicAgainstExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var sum, worst float64
	n, exact := 0, 0
	for range 300 {
		p := small(rng)
		h, err := Heuristic(p)
		if err != nil {
			t.Fatal(err)
		}
		best, ok, err := Exact(p, 2_000_000)
		if err != nil {
			t.Fatal(err)
		}
		hc, _ := p.Cost(h)
		bc, _ := p.Cost(best)
		if bc.Total > hc.Total+1e-9 {
			t.Fatalf("exact %+v costs more than the heuristic's %+v", bc, hc)
		}
		if !ok {
			continue
		}
		exact++
		gap := hc.Total/bc.Total - 1
		sum, worst, n = sum+gap, max(worst, gap), n+1
		if gap > 0.05 {
			t.Errorf("heuristic %+v against exact %+v: %.1f %% over", hc, bc, 100*gap)
		}
	}
	if exact < 250 {
		t.Errorf("only %d of 300 solved exactly", exact)
	}
	t.Logf("%d problems: the heuristic is %.2f %% over the least cost on average, %.2f %% at worst", n, 100*sum/float64(n), 100*worst)
}
