package skew

import (
	"github.com/weirstream/weir/internal/partition"
)

// strategySim runs one strategy over epochs and accumulates its figures.
// Its slices are reused from one epoch to the next.
type strategySim struct {
	strategy partition.Strategy
	p        int
	cost     SimCost
	planner  partition.Planner
	two      *partition.TwoChoices

	mapImb, redImb        partition.Imbalance
	split, frags, keys    int64
	records               int64
	mapNanos, reduceNanos float64
	blockRecs, blockKeys  []int64
	redLoad, redKeys      []int64
	last, second, nfrag   []int32 // per slot, for the arrival strategies
}

func newStrategySim(s partition.Strategy, p int, cost SimCost) *strategySim {
	return &strategySim{
		strategy:  s,
		p:         p,
		cost:      cost,
		blockRecs: make([]int64, p),
		blockKeys: make([]int64, p),
		redLoad:   make([]int64, p),
		redKeys:   make([]int64, p),
	}
}

func (s *strategySim) run(e *epoch) {
	clear(s.blockRecs)
	clear(s.blockKeys)
	clear(s.redLoad)
	clear(s.redKeys)
	s.records += int64(len(e.seq))
	s.keys += int64(len(e.counts))
	var mapT, redT float64
	c := s.cost
	switch s.strategy {
	case partition.Hash:
		plan := s.planner.Hash(e.counts, e.hashes, s.p, s.p)
		n := int64(len(e.seq))
		for b := range s.p {
			s.blockRecs[b] = ceilDiv(int64(b+1)*n, int64(s.p)) - ceilDiv(int64(b)*n, int64(s.p))
		}
		for g := range e.counts {
			for _, f := range plan.Fragments(g) {
				s.redKeys[f.Reducer]++
			}
		}
		copy(s.redLoad, plan.ReducerLoad)
		s.frags += int64(len(plan.Frags))
		s.split += int64(plan.SplitKeys)
		for b := range s.p {
			mapT = max(mapT, c.Route*float64(s.blockRecs[b]))
			redT = max(redT, c.Fold*float64(s.redLoad[b])+c.PerKey*float64(s.redKeys[b]))
		}
	case partition.Prompt:
		plan := s.planner.Prompt(e.counts, nil, s.p, s.p)
		copy(s.blockRecs, plan.BlockRecords)
		copy(s.blockKeys, plan.BlockKeys)
		copy(s.redLoad, plan.ReducerLoad)
		s.frags += int64(len(plan.Frags))
		s.split += int64(plan.SplitKeys)
		mapT, redT = s.preaggTimes()
	case partition.RoundRobin, partition.PKG:
		s.arrival(e)
		mapT, redT = s.preaggTimes()
	default:
		panic("skew: no simulation of strategy " + s.strategy.String())
	}
	s.mapImb.Add(s.blockRecs)
	s.redImb.Add(s.redLoad)
	s.mapNanos += mapT
	s.reduceNanos += redT
}

// arrival cuts the epoch's records into blocks in arrival order, by
// position (RoundRobin) or by two choices (PKG, one sender); each block
// makes one partial per key, sent to the key's reducer by hash.
func (s *strategySim) arrival(e *epoch) {
	n := len(e.counts)
	s.last = resize(s.last, n, -1)
	s.second = resize(s.second, n, -1)
	s.nfrag = resize(s.nfrag, n, 0)
	if s.strategy == partition.PKG {
		if s.two == nil {
			s.two = partition.NewTwoChoices(s.p)
		}
		s.two.Reset(s.p)
	}
	total := int64(len(e.seq))
	for i, g := range e.seq {
		var b int32
		if s.strategy == partition.RoundRobin {
			b = int32(partition.RoundRobinBlock(int64(i), total, s.p))
		} else {
			b = int32(s.two.Choose(e.hashes[g]))
		}
		s.blockRecs[b]++
		// RoundRobin visits a key's blocks in increasing order, PKG uses
		// at most two: remembering the last two blocks finds every
		// partial made before.
		if s.last[g] == b || s.second[g] == b {
			continue
		}
		s.second[g], s.last[g] = s.last[g], b
		s.nfrag[g]++
		s.blockKeys[b]++
		s.redLoad[partition.HashIndex(e.hashes[g], s.p)]++
	}
	for _, f := range s.nfrag {
		s.frags += int64(f)
		if f > 1 {
			s.split++
		}
	}
}

// preaggTimes returns the slowest map task and reducer when the blocks
// pre-aggregate.
func (s *strategySim) preaggTimes() (mapT, redT float64) {
	c := s.cost
	for b := range s.p {
		mapT = max(mapT, c.Fold*float64(s.blockRecs[b])+c.PerKey*float64(s.blockKeys[b]))
		redT = max(redT, c.Merge*float64(s.redLoad[b]))
	}
	return mapT, redT
}

func (s *strategySim) result(epochs int) SimResult {
	secs := (s.mapNanos + s.reduceNanos) / 1e9
	r := SimResult{
		Strategy:        s.strategy.String(),
		Partitions:      s.p,
		Epochs:          epochs,
		Records:         s.records,
		MapImbalance:    s.mapImb.Value(),
		ReduceImbalance: s.redImb.Value(),
		SplitKeys:       s.split,
		Fragments:       s.frags,
		Keys:            s.keys,
		MapSeconds:      s.mapNanos / 1e9,
		ReduceSeconds:   s.reduceNanos / 1e9,
		Seconds:         secs,
	}
	if secs > 0 {
		r.EventsPerS = float64(s.records) / secs
	}
	return r
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// resize returns s with n elements, all v.
func resize(s []int32, n int, v int32) []int32 {
	if cap(s) < n {
		s = make([]int32, n)
	}
	s = s[:n]
	for i := range s {
		s[i] = v
	}
	return s
}
