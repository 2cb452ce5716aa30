package placement

import (
	"errors"
	"fmt"
	"math"
)

// Instance is an instance a group may place key groups on.
type Instance struct{ ID, Process int }

// Group is the key groups of one routing table.
type Group struct {
	// Load is each key group's load (records, or seconds of work, a
	// second); Bytes its state's size (nil: none).
	Load  []float64
	Bytes []int64
	// Current is each key group's owner now, an instance ID; one not
	// among Instances (or -1) must move. nil: none is placed yet.
	Current []int
	// Instances are those it may place on.
	Instances []Instance
}

// Unit names a key group of a group.
type Unit struct{ Group, KeyGroup int }

// Flow is the records per second from one key group to another.
type Flow struct {
	From, To Unit
	Rate     float64
}

// Weights weigh moved state and remote flows against imbalance.
type Weights struct {
	// Move is the cost of moving every byte of state, Traffic that of
	// every flow crossing processes, in units of imbalance (an instance
	// at twice its ideal load costs 1 more than a balanced one).
	Move, Traffic float64
}

// DefaultWeights: moving all the state costs as much as 10 % more load on
// the busiest instance, and so does sending every flow across processes.
var DefaultWeights = Weights{Move: 0.1, Traffic: 0.1}

// Problem is what to place.
type Problem struct {
	Groups []Group
	Flows  []Flow
	Weights
}

// Assignment is each group's key groups' owners (instance IDs).
type Assignment [][]int

// Cost is an assignment's figures and their weighted total.
type Cost struct {
	Imbalance float64 // the largest load over its group's ideal
	Moved     int64   // state bytes that change owner
	Remote    float64 // flows whose ends are on different processes
	Total     float64
}

// Check refuses a problem that cannot be placed.
func (p Problem) Check() error {
	if len(p.Groups) == 0 {
		return errors.New("placement: no groups")
	}
	for g, gr := range p.Groups {
		switch {
		case len(gr.Instances) == 0:
			return fmt.Errorf("placement: group %d has no instance to place on", g)
		case gr.Bytes != nil && len(gr.Bytes) != len(gr.Load):
			return fmt.Errorf("placement: group %d: %d sizes for %d key groups", g, len(gr.Bytes), len(gr.Load))
		case gr.Current != nil && len(gr.Current) != len(gr.Load):
			return fmt.Errorf("placement: group %d: %d owners for %d key groups", g, len(gr.Current), len(gr.Load))
		}
		seen := map[int]bool{}
		for _, in := range gr.Instances {
			if seen[in.ID] {
				return fmt.Errorf("placement: group %d: instance %d twice", g, in.ID)
			}
			seen[in.ID] = true
		}
		for k, l := range gr.Load {
			if !(l >= 0) || math.IsInf(l, 1) || gr.Bytes != nil && gr.Bytes[k] < 0 {
				return fmt.Errorf("placement: group %d, key group %d: load %v, bytes must be finite and not negative", g, k, l)
			}
		}
	}
	for _, f := range p.Flows {
		if !p.valid(f.From) || !p.valid(f.To) || !(f.Rate >= 0) || math.IsInf(f.Rate, 1) {
			return fmt.Errorf("placement: flow %+v: no such key group, or a rate that is not finite and not negative", f)
		}
	}
	if !(p.Move >= 0) || !(p.Traffic >= 0) || math.IsInf(p.Move, 1) || math.IsInf(p.Traffic, 1) {
		return fmt.Errorf("placement: weights %+v: want finite and not negative", p.Weights)
	}
	return nil
}

func (p Problem) valid(u Unit) bool {
	return u.Group >= 0 && u.Group < len(p.Groups) && u.KeyGroup >= 0 && u.KeyGroup < len(p.Groups[u.Group].Load)
}

// Cost returns a's cost, or why a is not an assignment of p: every key
// group must be on one of its group's instances.
func (p Problem) Cost(a Assignment) (Cost, error) {
	if len(a) != len(p.Groups) {
		return Cost{}, fmt.Errorf("placement: an assignment of %d groups for %d", len(a), len(p.Groups))
	}
	for g, gr := range p.Groups {
		if len(a[g]) != len(gr.Load) {
			return Cost{}, fmt.Errorf("placement: group %d: %d owners for %d key groups", g, len(a[g]), len(gr.Load))
		}
		ids := map[int]bool{}
		for _, in := range gr.Instances {
			ids[in.ID] = true
		}
		for k, id := range a[g] {
			if !ids[id] {
				return Cost{}, fmt.Errorf("placement: group %d, key group %d: instance %d is not one of the group's", g, k, id)
			}
		}
	}
	return newState(p, a).cost(), nil
}
