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

// rescale is one keyed group of n key groups with skewed loads and equal
// state, from contiguous ranges over from instances to to instances on
// procs processes.
func rescale(n, from, to, procs int, s float64, seed uint64) Problem {
	rng := rand.New(rand.NewPCG(seed, 1))
	bytes := make([]int64, n)
	for k := range bytes {
		bytes[k] = 1 << 20
	}
	return Problem{Groups: []Group{{Load: zipf(n, s, rng), Bytes: bytes, Current: contiguous(n, from), Instances: instances(to, procs)}}, Weights: DefaultWeights}
}

// Where the heaviest key group is at most the mean load, the heuristic
// balances to within 10 % of the mean, from contiguous ranges that are
// far from it, at every size and skew tried.
func TestHeuristicBalances(t *testing.T) {
	for _, c := range []struct {
		n, from, to int
		s           float64
	}{{128, 2, 4, 0.5}, {1024, 4, 8, 0.8}, {4096, 16, 64, 0.5}, {4096, 64, 32, 0.3}} {
		p := rescale(c.n, c.from, c.to, 4, c.s, 1)
		var total, most float64
		for _, l := range p.Groups[0].Load {
			total, most = total+l, max(most, l)
		}
		if most > total/float64(c.to) {
			t.Fatalf("%+v: the heaviest key group is above the mean; pick a milder skew", c)
		}
		before, _ := p.Cost(Assignment{contiguous(c.n, min(c.from, c.to))}) // shrinking: not the current
		a, err := Heuristic(p)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := p.Cost(a)
		if got.Imbalance > 1.1 {
			t.Errorf("%+v: max/mean %.3f (ranges %.3f)", c, got.Imbalance, before.Imbalance)
		}
		t.Logf("%+v: max/mean %.3f from %.3f, %.0f %% of the state moved", c, got.Imbalance, before.Imbalance, 100*float64(got.Moved)/float64(c.n<<20))
	}
}

// Weighing the state a placement moves moves less of it than balancing
// alone, at little more imbalance.
func TestHeuristicMovesLess(t *testing.T) {
	for _, c := range []struct{ n, from, to int }{{128, 4, 5}, {1024, 8, 6}, {1024, 3, 4}} {
		p := rescale(c.n, c.from, c.to, 2, 0.6, 2)
		with, _ := Heuristic(p)
		p.Move = 0
		without, _ := Heuristic(p)
		p.Move = DefaultWeights.Move
		w, _ := p.Cost(with)
		wo, _ := p.Cost(without)
		if w.Moved >= wo.Moved || w.Imbalance > 1.1 {
			t.Errorf("%+v: %d bytes moved at max/mean %.3f, against %d at %.3f without the cost of moving", c, w.Moved, w.Imbalance, wo.Moved, wo.Imbalance)
		}
		t.Logf("%+v: %.0f %% of the state moved (max/mean %.3f) against %.0f %% (%.3f) without its cost", c,
			100*float64(w.Moved)/float64(c.n<<20), w.Imbalance, 100*float64(wo.Moved)/float64(c.n<<20), wo.Imbalance)
	}
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
