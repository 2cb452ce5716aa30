package placement

import (
	"math"
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
