package scalesim

import (
	"math"
	"math/rand/v2"

	"github.com/weirstream/weir/internal/placement"
)

// Gaps is the placement heuristic against branch and bound on small
// random problems.
type Gaps struct {
	Problems, Solved int
	// Mean and Worst are the heuristic's cost over the least, less one,
	// over the problems solved exactly.
	Mean, Worst float64
}

// PlacementGaps solves problems random small problems (one or two groups
// of 5 to 8 key groups with skewed loads and sizes, over 2 to 4
// instances on 2 processes, from contiguous owners over 1 to 4, with
// flows between the groups' key groups) by the heuristic and exactly.
func PlacementGaps(problems int, seed uint64) (Gaps, error) {
	rng := rand.New(rand.NewPCG(seed, 3))
	g := Gaps{Problems: problems}
	for range problems {
		p := smallProblem(rng)
		h, err := placement.Heuristic(p)
		if err != nil {
			return g, err
		}
		best, ok, err := placement.Exact(p, 2_000_000)
		if err != nil {
			return g, err
		}
		if !ok {
			continue
		}
		hc, _ := p.Cost(h)
		bc, _ := p.Cost(best)
		gap := hc.Total/bc.Total - 1
		g.Solved++
		g.Mean += gap
		g.Worst = max(g.Worst, gap)
	}
	if g.Solved > 0 {
		g.Mean /= float64(g.Solved)
	}
	return g, nil
}

func smallProblem(rng *rand.Rand) placement.Problem {
	p := placement.Problem{Weights: placement.DefaultWeights}
	groups := 1 + rng.IntN(2)
	for range groups {
		n := 5 + rng.IntN(4)
		gr := placement.Group{Load: make([]float64, n), Bytes: make([]int64, n), Instances: spread(2+rng.IntN(3), 2)}
		gr.Current = ranges(n, 1+rng.IntN(4))
		for k := range n {
			gr.Load[k] = math.Floor(100 * math.Pow(rng.Float64(), 2))
			gr.Bytes[k] = int64(1 + rng.IntN(1000))
		}
		p.Groups = append(p.Groups, gr)
	}
	if groups == 2 {
		for k := range min(len(p.Groups[0].Load), len(p.Groups[1].Load)) {
			p.Flows = append(p.Flows, placement.Flow{From: placement.Unit{Group: 0, KeyGroup: k}, To: placement.Unit{Group: 1, KeyGroup: k}, Rate: float64(rng.IntN(50))})
		}
	}
	return p
}

// Rescaled is one rescale's placement, with and without the cost of
// moving state.
type Rescaled struct {
	KeyGroups, From, To int
	// Before is the imbalance of the old owners' ranges spread over the
	// new instances' count; With and Without the placements' costs.
	Before        float64
	With, Without placement.Cost
	// Bytes is all the state's.
	Bytes int64
}

// Rescale places n key groups of Zipf(s) loads and equal state, owned in
// contiguous ranges by from instances, over to instances on procs
// processes, with and without weighing the state moved.
func Rescale(n, from, to, procs int, s float64, seed uint64) (Rescaled, error) {
	op := Op{KeyGroups: n, Skew: s}
	load := op.shares(seed)
	bytes := make([]int64, n)
	for k := range bytes {
		bytes[k] = 1 << 20
	}
	p := placement.Problem{Groups: []placement.Group{{Load: load, Bytes: bytes, Current: ranges(n, from), Instances: spread(to, procs)}}, Weights: placement.DefaultWeights}
	r := Rescaled{KeyGroups: n, From: from, To: to, Bytes: int64(n) << 20}
	before, err := p.Cost(placement.Assignment{ranges(n, min(from, to))})
	if err != nil {
		return r, err
	}
	r.Before = before.Imbalance
	with, err := placement.Heuristic(p)
	if err != nil {
		return r, err
	}
	r.With, _ = p.Cost(with)
	p.Move = 0
	without, err := placement.Heuristic(p)
	if err != nil {
		return r, err
	}
	p.Move = placement.DefaultWeights.Move
	r.Without, _ = p.Cost(without)
	return r, nil
}

// spread is n instances, IDs 0 to n-1, over procs processes in blocks.
func spread(n, procs int) []placement.Instance {
	out := make([]placement.Instance, n)
	for i := range out {
		out[i] = placement.Instance{ID: i, Process: i * procs / n}
	}
	return out
}

// ranges is n key groups over the first m instances in contiguous ranges.
func ranges(n, m int) []int {
	out := make([]int, n)
	for k := range out {
		out[k] = k * m / n
	}
	return out
}
