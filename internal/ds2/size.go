package ds2

import (
	"errors"
	"fmt"
	"math"
)

// Operator is one operator of a sizing, over one policy interval.
type Operator struct {
	// Name names it in errors and reports.
	Name string
	// Upstream are the operators it reads from: indices of operators
	// before it (a sizing's operators are in topological order).
	Upstream []int
	// Instances is its parallelism over the interval (at least 1).
	Instances int
	// Processing and Output are its true rates: records in and out per
	// second of useful time, summed over its instances. Zero Processing
	// means it was not measured (it processed nothing): it keeps its
	// instances and passes its target input on unchanged.
	Processing, Output float64
	// Source marks a source; Target is then the records per second it must
	// sustain (its observed input rate, and more while it catches up on a
	// backlog). A measured source is sized like any operator, its target
	// as its input: it passes on Target times Output over Processing.
	Source bool
	Target float64
	// KeyGroups are the records each key group of a keyed operator
	// received over the interval; nil for an operator that is not keyed.
	KeyGroups []float64
	// Max is the most instances it may run (0: no bound).
	Max int
	// Keep keeps its instances (a source whose readers its input fixes):
	// its measured rates still give its projected output.
	Keep bool
}

// Hot is a key group that alone exceeds one instance's capacity at its
// operator's target input: no parallelism meets the target.
type Hot struct {
	Operator, KeyGroup int
	// Need is the key group's records per second at the target input,
	// Capacity one instance's at the sizing's utilization.
	Need, Capacity float64
}

// Sizing is the parallelism of each operator of a Size, with why.
type Sizing struct {
	// Parallelism is each operator's optimal parallelism (within Max). A
	// keyed operator's assumes its key groups placed by load (heaviest
	// first onto the least loaded instance, as internal/placement does);
	// contiguous ranges of key groups may need more.
	Parallelism []int
	// Input is each operator's target input rate, records per second.
	Input []float64
	// Max is each operator's bound, as given (0: none).
	Max []int
	// Measured is false for an operator that processed nothing or is
	// kept: its parallelism is its instances (within Max), and a Decider
	// leaves it.
	Measured []bool
	// Hot are the key groups that keep an operator from its target;
	// Capped the operators that need more instances than their Max.
	Hot    []Hot
	Capped []int
}

// Size returns each operator's parallelism for the sources' targets, with
// each instance planned to run at utilization (0 < utilization ≤ 1) of its
// true processing rate.
func Size(ops []Operator, utilization float64) (Sizing, error) {
	if !(utilization > 0 && utilization <= 1) {
		return Sizing{}, fmt.Errorf("ds2: utilization %v: want more than 0 and at most 1", utilization)
	}
	if err := check(ops); err != nil {
		return Sizing{}, err
	}
	s := Sizing{Parallelism: make([]int, len(ops)), Input: make([]float64, len(ops)), Max: make([]int, len(ops)), Measured: make([]bool, len(ops))}
	out := make([]float64, len(ops)) // projected output rates
	for i, op := range ops {
		in := op.Target
		if !op.Source {
			in = 0
			for _, u := range op.Upstream {
				in += out[u]
			}
		}
		s.Input[i], s.Max[i] = in, op.Max
		out[i] = in
		if op.Processing > 0 {
			out[i] = in * op.Output / op.Processing
		}
		if op.Processing == 0 || op.Keep {
			s.Parallelism[i] = op.Instances
			if op.Max > 0 {
				s.Parallelism[i] = min(op.Instances, op.Max)
			}
			continue
		}
		s.Measured[i] = true
		capacity := op.Processing / float64(op.Instances) * utilization
		if !finite(in/capacity) || !finite(out[i]) || in/capacity > maxInstances {
			return Sizing{}, fmt.Errorf("ds2: %s: a target input of %v records a second at %v an instance, passing on %v: the rates are too far apart to size", op.Name, in, capacity, out[i])
		}
		par := max(1, ceil(in/capacity))
		if op.KeyGroups != nil {
			var hot *Hot
			par, hot = packed(op.KeyGroups, in, capacity, par)
			if hot != nil {
				hot.Operator = i
				s.Hot = append(s.Hot, *hot)
			}
		}
		if op.Max > 0 && par > op.Max {
			par = op.Max
			s.Capped = append(s.Capped, i)
		}
		s.Parallelism[i] = par
	}
	return s, nil
}

// maxInstances bounds a sizing: more instances than this of one operator
// are no sizing at all but rates far apart.
const maxInstances = 1 << 24

// ceil rounds x up, forgiving the last bits of a float that should have
// been a whole number.
func ceil(x float64) int { return int(math.Ceil(x - 1e-9)) }

// check refuses operators that cannot be sized.
func check(ops []Operator) error {
	if len(ops) == 0 {
		return errors.New("ds2: no operators")
	}
	for i, op := range ops {
		name := op.Name
		if name == "" {
			name = fmt.Sprintf("operator %d", i)
		}
		switch {
		case op.Instances < 1:
			return fmt.Errorf("ds2: %s: %d instances; want at least 1", name, op.Instances)
		case op.Max < 0:
			return fmt.Errorf("ds2: %s: Max %d; want 0 (none) or more", name, op.Max)
		case !finite(op.Processing) || !finite(op.Output) || !finite(op.Target):
			return fmt.Errorf("ds2: %s: rates must be finite and not negative (processing %v, output %v, target %v)", name, op.Processing, op.Output, op.Target)
		case op.Source && len(op.Upstream) > 0:
			return fmt.Errorf("ds2: %s: a source has no upstream operators", name)
		case !op.Source && len(op.Upstream) == 0:
			return fmt.Errorf("ds2: %s: an operator that is not a source needs upstream operators", name)
		}
		for _, u := range op.Upstream {
			if u < 0 || u >= i {
				return fmt.Errorf("ds2: %s: upstream %d is not an operator before it (the operators go in topological order)", name, u)
			}
		}
		for g, c := range op.KeyGroups {
			if !finite(c) {
				return fmt.Errorf("ds2: %s: key group %d counts %v records", name, g, c)
			}
		}
	}
	return nil
}

func finite(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }
