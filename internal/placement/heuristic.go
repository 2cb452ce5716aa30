package placement

import (
	"math"
	"math/rand/v2"
	"slices"
)

// tolerances are the caps on an instance's load, over its group's ideal,
// that Heuristic balances to; it keeps the cheapest result. The last
// balances nothing: it only places what must move.
var tolerances = []float64{0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, math.Inf(1)}

// Heuristic returns an assignment of low cost. For each of a few caps on
// an instance's load, it starts twice: keeping the key groups whose
// owners stay and placing the others heaviest first, or placing all of
// them heaviest first (where they fit under the cap at least cost, their
// owner preferred); it then moves key groups off instances above the cap
// (the cheapest per load relieved first), moves key groups to their
// flows' partners where that costs less, and improves the result by
// single moves and swaps (for a large problem only the cheapest start
// is). The cheapest result of a small problem is then shaken (a few key
// groups moved at random, from a fixed seed, and improved again, 100
// times), and the cheapest of all returned.
func Heuristic(p Problem) (Assignment, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	var best *state
	var bestCost float64
	for start := range 2 * len(tolerances) {
		tol, keep := tolerances[start/2], start%2 == 0
		if !keep && math.IsInf(tol, 1) {
			continue // placing everything anew, unbalanced, helps nothing
		}
		s := newState(p, nil)
		caps := make([]float64, len(p.Groups))
		for g := range caps {
			caps[g] = s.ideal[g] * (1 + tol) * (1 + 1e-9)
		}
		s.placeRest(caps, keep)
		for g := range p.Groups {
			s.relieve(g, caps[g])
		}
		s.towardsPartners(caps)
		if s.units() <= smallProblem {
			s.descend()
		}
		if c := s.cost().Total; best == nil || c < bestCost-1e-12 {
			best, bestCost = s, c
		}
	}
	if best.units() > smallProblem {
		best.descend()
	}
	best.perturb()
	return best.assignment(), nil
}

// placeRest keeps every key group on its current owner when it stays
// (keep; otherwise it places all of them anew), and places the others,
// heaviest first, on the instance under its cap that costs least (the
// least loaded of those), or the least loaded.
func (s *state) placeRest(caps []float64, keep bool) {
	var rest []Unit
	for g := range s.at {
		for k, o := range s.orig[g] {
			if o >= 0 && keep {
				s.place(g, k, o)
			} else {
				rest = append(rest, Unit{g, k})
			}
		}
	}
	heaviestFirst(s.p, rest)
	for _, u := range rest {
		g, k := u.Group, u.KeyGroup
		l := s.p.Groups[g].Load[k]
		best, bestCost, bestFits := -1, 0.0, false
		for d := range s.load[g] {
			fits := s.load[g][d]+l <= caps[g]
			m, r := s.delta(g, k, d)
			c := s.weighted(m, r)
			better := best < 0 || fits && !bestFits ||
				fits == bestFits && (c < bestCost-1e-12 || c <= bestCost+1e-12 && s.load[g][d] < s.load[g][best])
			if better {
				best, bestCost, bestFits = d, c, fits
			}
		}
		s.place(g, k, best)
	}
}

// relieve moves key groups of g off instances above limit onto instances
// they fit under it, taking each time the move of least cost per load
// relieved, until none is above or none fits.
func (s *state) relieve(g int, limit float64) {
	loads := s.p.Groups[g].Load
	for {
		from := -1
		for i, l := range s.load[g] {
			if l > limit && (from < 0 || l > s.load[g][from]) {
				from = i
			}
		}
		if from < 0 {
			return
		}
		excess := s.load[g][from] - limit
		bk, bd, bestRatio := -1, -1, 0.0
		for k, i := range s.at[g] {
			if i != from || loads[k] == 0 {
				continue
			}
			for d := range s.load[g] {
				if d == from || s.load[g][d]+loads[k] > limit {
					continue
				}
				m, r := s.delta(g, k, d)
				ratio := (s.weighted(m, r) + 1e-9) / min(loads[k], excess)
				if bk < 0 || ratio < bestRatio-1e-12 || ratio <= bestRatio+1e-12 && s.load[g][d] < s.load[g][bd] {
					bk, bd, bestRatio = k, d, ratio
				}
			}
		}
		if bk < 0 {
			return
		}
		s.place(g, bk, bd)
	}
}

// towardsPartners moves each key group with flows onto an instance under
// its cap on a process of its partners when that lowers the cost.
func (s *state) towardsPartners(caps []float64) {
	for range 3 {
		moved := false
		for g := range s.at {
			for k := range s.at[g] {
				if len(s.adj[g][k]) > 0 && s.bestMove(g, k, caps[g]) {
					moved = true
				}
			}
		}
		if !moved {
			return
		}
	}
}

// bestMove moves key group k of g to the instance under limit that lowers
// the cost most, if one does.
func (s *state) bestMove(g, k int, limit float64) bool {
	l := s.p.Groups[g].Load[k]
	from := s.at[g][k]
	base := s.cost().Total
	best, bestCost := -1, base-1e-12
	t := s.tops()
	procs := s.partnerProcs(g, k)
	for d := range s.load[g] {
		if d == from || s.load[g][d]+l > limit || !procs[s.proc(g, d)] {
			continue
		}
		m, r := s.delta(g, k, d)
		if c := s.imbalanceIf(t, g, from, d, l) + s.weighted(s.moved+m, s.remote+r); c < bestCost {
			best, bestCost = d, c
		}
	}
	if best < 0 {
		return false
	}
	s.place(g, k, best)
	return true
}

// smallProblem is the most key groups for which every start is improved
// by moves and swaps, and the best shaken.
const smallProblem = 256

// units is the key groups of every group.
func (s *state) units() int {
	n := 0
	for _, at := range s.at {
		n += len(at)
	}
	return n
}

// perturb shakes the state of a small problem: rounds of a few key
// groups moved at random and the result improved, each kept when it
// costs less. The seed is fixed, so that every process computes the same
// assignment.
func (s *state) perturb() {
	units := s.units()
	if units > smallProblem {
		return
	}
	rng := rand.New(rand.NewPCG(1, uint64(units)))
	cost := s.cost().Total
	for range 100 {
		c := s.clone()
		for range 3 {
			g := rng.IntN(len(c.at))
			if len(c.at[g]) == 0 {
				continue
			}
			c.place(g, rng.IntN(len(c.at[g])), rng.IntN(len(c.load[g])))
		}
		c.descend()
		if cc := c.cost().Total; cc < cost-1e-12 {
			*s, cost = *c, cc
		}
	}
}

// heaviestFirst sorts units by load, the heaviest first (stable).
func heaviestFirst(p Problem, units []Unit) {
	slices.SortStableFunc(units, func(a, b Unit) int {
		la, lb := p.Groups[a.Group].Load[a.KeyGroup], p.Groups[b.Group].Load[b.KeyGroup]
		switch {
		case la > lb:
			return -1
		case la < lb:
			return 1
		}
		return 0
	})
}
