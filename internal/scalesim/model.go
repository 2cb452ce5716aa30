package scalesim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/weirstream/weir/internal/ds2"
	"github.com/weirstream/weir/internal/placement"
)

// Op is one operator after the source.
type Op struct {
	Name string
	// Capacity is the records a second one instance serves when busy all
	// the time; Selectivity the records out per record in.
	Capacity, Selectivity float64
	// KeyGroups, for a keyed operator, and the Zipf exponent of their
	// shares of the input (0: equal shares).
	KeyGroups int
	Skew      float64
	// Max is the most instances it may run (0: no bound).
	Max int
}

// Model is a pipeline: a source, then Ops in a chain.
type Model struct {
	Ops []Op
	// Noise is how far each interval's measured rates stray, a share
	// (uniform, up to it either way).
	Noise float64
	Seed  uint64
}

// Check refuses a model that cannot be simulated.
func (m Model) Check() error {
	if len(m.Ops) == 0 {
		return errors.New("scalesim: no operators")
	}
	for _, op := range m.Ops {
		switch {
		case !(op.Capacity > 0) || math.IsInf(op.Capacity, 1):
			return fmt.Errorf("scalesim: %s: capacity %v; want a positive rate", op.Name, op.Capacity)
		case !(op.Selectivity >= 0) || math.IsInf(op.Selectivity, 1):
			return fmt.Errorf("scalesim: %s: selectivity %v; want 0 or more", op.Name, op.Selectivity)
		case op.KeyGroups < 0 || op.Skew < 0 || op.Max < 0:
			return fmt.Errorf("scalesim: %s: key groups %d, skew %v and max %d must not be negative", op.Name, op.KeyGroups, op.Skew, op.Max)
		}
	}
	if !(m.Noise >= 0 && m.Noise < 1) {
		return fmt.Errorf("scalesim: noise %v; want from 0 to below 1", m.Noise)
	}
	return nil
}

// shares are a keyed operator's key groups' shares of its input (nil for
// one that is not keyed), the heaviest Zipf ranks spread by a fixed
// shuffle.
func (op Op) shares(seed uint64) []float64 {
	if op.KeyGroups == 0 {
		return nil
	}
	out := make([]float64, op.KeyGroups)
	var total float64
	for k := range out {
		out[k] = 1 / math.Pow(float64(k+1), op.Skew)
		total += out[k]
	}
	for k := range out {
		out[k] /= total
	}
	rng := rand.New(rand.NewPCG(seed, uint64(op.KeyGroups)))
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// measure is one interval's operators at par (the source first) for a
// source rate: the rate the source read, each operator's true processing
// and output rates (which do not depend on the parallelism) and its
// key-group counts, each off by up to the noise on its own. The source
// keeps its instances, as the engine's do.
func (m Model) measure(par []int, rate float64, shares [][]float64, rng *rand.Rand) []ds2.Operator {
	off := func() float64 { return 1 + m.Noise*(2*rng.Float64()-1) }
	ops := []ds2.Operator{{Name: "source", Source: true, Target: rate * off(), Instances: par[0], Keep: true}}
	in := rate
	for i, op := range m.Ops {
		o := ds2.Operator{Name: op.Name, Upstream: []int{i}, Instances: par[i+1], Max: op.Max}
		o.Processing = op.Capacity * float64(par[i+1]) * off()
		o.Output = o.Processing * op.Selectivity * off()
		if sh := shares[i]; sh != nil {
			o.KeyGroups = make([]float64, len(sh))
			for k, s := range sh {
				o.KeyGroups[k] = in * s * off()
			}
		}
		ops = append(ops, o)
		in *= op.Selectivity
	}
	return ops
}

// Optimal is the fewest instances of each operator (the source first, at
// 1) that serve rate with no instance above utilization of its capacity,
// by this model alone: an operator that is not keyed needs its input over
// its capacity, rounded up; a keyed one, the fewest instances from there
// up over which the placement heuristic (moved state not weighed) puts
// its key groups with none above the limit. When a key group alone is
// above it, no parallelism serves the rate: the operator's entry is 0 and
// false is returned.
func (m Model) Optimal(rate, utilization float64) ([]int, bool) {
	out, ok := []int{1}, true
	in := rate
	for i, op := range m.Ops {
		limit := op.Capacity * utilization
		p := max(1, int(math.Ceil(min(in/limit, 1<<24)-1e-9)))
		if sh := op.shares(m.Seed + uint64(i)); sh != nil {
			p = sweep(sh, in, limit, p)
			if p < 0 {
				p, ok = 0, false
			}
		}
		out = append(out, p)
		in *= op.Selectivity
	}
	return out, ok
}

// sweep is the fewest instances, from p, over which the placement
// heuristic puts key groups of shares of in with none above limit; -1
// when a key group alone is above it.
func sweep(shares []float64, in, limit float64, p int) int {
	load := make([]float64, len(shares))
	for k, s := range shares {
		load[k] = in * s
		if load[k] > limit*(1+1e-9) {
			return -1
		}
	}
	for ; p < len(shares); p++ {
		insts := make([]placement.Instance, p)
		for i := range insts {
			insts[i] = placement.Instance{ID: i}
		}
		pr := placement.Problem{Groups: []placement.Group{{Load: load, Instances: insts}}}
		a, err := placement.Heuristic(pr)
		if err != nil {
			return -1
		}
		most := make([]float64, p)
		for k, i := range a[0] {
			most[i] += load[k]
		}
		fits := true
		for _, l := range most {
			fits = fits && l <= limit*(1+1e-9)
		}
		if fits {
			return p
		}
	}
	return len(shares)
}
