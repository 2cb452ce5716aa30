package placement

import (
	"math"
	"math/rand/v2"
	"testing"
)

// zipf is n loads falling off with rank as 1/rank^s, shuffled.
func zipf(n int, s float64, rng *rand.Rand) []float64 {
	out := make([]float64, n)
	for k := range out {
		out[k] = 1000 / math.Pow(float64(k+1), s)
	}
	rng.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// Two keyed operators exchange records key group by key group (the first
// sends key group k to the second's k), over instances on two processes:
// with the cost of remote flows, every pair ends on one process while
// both stay balanced; without it, most pairs are split.
func TestHeuristicCollocates(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	n := 64
	p := Problem{Weights: DefaultWeights}
	for range 2 {
		p.Groups = append(p.Groups, Group{Load: zipf(n, 0.3, rng), Instances: instances(4, 2)})
	}
	p.Groups[1].Instances = []Instance{{10, 1}, {11, 0}, {12, 1}, {13, 0}} // other IDs, interleaved
	for k := range n {
		p.Flows = append(p.Flows, Flow{From: Unit{0, k}, To: Unit{1, k}, Rate: 10})
	}
	a, _ := Heuristic(p)
	c, _ := p.Cost(a)
	if c.Remote > 0.1*10*float64(n) || c.Imbalance > 1.1 {
		t.Errorf("%+v: want under a tenth of the flows remote, max/mean at most 1.1", c)
	}
	p.Traffic = 0
	a, _ = Heuristic(p)
	c0, _ := p.Cost(a)
	t.Logf("remote %.0f of %d with the cost of flows (max/mean %.3f), %.0f without", c.Remote, 10*n, c.Imbalance, c0.Remote)
}
