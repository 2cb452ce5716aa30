package placement

import (
	"cmp"
	"slices"
)

// descend improves the state by single moves and swaps, each lowering the
// total cost (or, at an equal cost, the sum of squared loads), the best
// first, for a bounded number of rounds.
func (s *state) descend() {
	rounds := 4 * s.units()
	if s.units() > smallProblem {
		rounds = maxRounds
	}
	for range rounds {
		t := s.tops()
		c := s.bestChange(t)
		if c.kind == 0 {
			return
		}
		s.place(c.g, c.k, c.d)
		if c.kind == swap {
			s.place(c.g, c.k2, c.from)
		}
	}
}

// maxRounds bounds the changes descend makes on a large problem, whose
// starts are balanced already.
const maxRounds = 500

const (
	move = 1 + iota
	swap
)

// change is a candidate move (key group k of g to instance d) or swap
// (k to d and k2 from d to from), and how much it lowers the cost.
type change struct {
	kind, g, k, d, k2, from int
	gain, flat              float64 // total cost, then squared loads
}

func (c change) better(o change) bool {
	return c.gain > o.gain+1e-12 || c.gain >= o.gain-1e-12 && c.flat > o.flat+1e-12
}

// top is what the imbalance after a change needs: each group's three
// most loaded instances, and the two largest group ratios.
type top struct {
	inst   [][3]int // -1 where a group has fewer
	groups [2]int
	ratio  []float64
}

func (s *state) tops() top {
	t := top{inst: make([][3]int, len(s.load)), groups: [2]int{-1, -1}, ratio: make([]float64, len(s.load))}
	for g, ls := range s.load {
		t.inst[g] = [3]int{-1, -1, -1}
		for i, l := range ls {
			for j := range 3 {
				if t.inst[g][j] < 0 || l > ls[t.inst[g][j]] {
					copy(t.inst[g][j+1:], t.inst[g][j:2])
					t.inst[g][j] = i
					break
				}
			}
		}
		t.ratio[g] = ls[t.inst[g][0]] / s.ideal[g]
		for j := range 2 {
			if t.groups[j] < 0 || t.ratio[g] > t.ratio[t.groups[j]] {
				if j == 0 {
					t.groups[1] = t.groups[0]
				}
				t.groups[j] = g
				break
			}
		}
	}
	return t
}

// imbalanceIf is the imbalance once l of g's load goes from instance
// from to d.
func (s *state) imbalanceIf(t top, g, from, d int, l float64) float64 {
	ls := s.load[g]
	most := max(ls[from]-l, ls[d]+l)
	for _, i := range t.inst[g] {
		if i >= 0 && i != from && i != d {
			most = max(most, ls[i])
			break
		}
	}
	out := max(1, most/s.ideal[g])
	for _, o := range t.groups {
		if o >= 0 && o != g {
			out = max(out, t.ratio[o])
			break
		}
	}
	return out
}

// bestChange is the change that lowers the cost most, or none (kind 0):
// moves of the key groups on each group's most loaded instance and of
// those with flows, and swaps off the most loaded.
func (s *state) bestChange(t top) change {
	base := s.cost().Total
	var best change
	try := func(g, k, d int) {
		from := s.at[g][k]
		if d == from {
			return
		}
		l := s.p.Groups[g].Load[k]
		m, r := s.delta(g, k, d)
		c := change{kind: move, g: g, k: k, d: d, from: from,
			gain: base - s.imbalanceIf(t, g, from, d, l) - s.weighted(s.moved+m, s.remote+r),
			flat: -2 * l * (s.load[g][d] - s.load[g][from] + l) / (s.ideal[g] * s.ideal[g])}
		if c.gain >= -1e-12 && c.better(best) && (c.gain > 1e-12 || c.flat > 1e-12) {
			best = c
		}
	}
	for g := range s.at {
		top := t.inst[g][0]
		for k, i := range s.at[g] {
			switch {
			case i == top:
				for d := range s.load[g] {
					try(g, k, d)
				}
			case len(s.adj[g][k]) > 0:
				// Towards its partners' processes only.
				procs := s.partnerProcs(g, k)
				for d := range s.load[g] {
					if procs[s.proc(g, d)] {
						try(g, k, d)
					}
				}
			}
		}
	}
	if sw := s.bestSwap(t, base); sw.kind != 0 && sw.better(best) {
		return sw
	}
	return best
}

// swapWith is how many of a group's least loaded instances a swap off
// its most loaded one considers.
const swapWith = 4

// bestSwap is the swap between a key group on a group's most loaded
// instance and one on one of its least loaded that lowers the cost most,
// or none.
func (s *state) bestSwap(t top, base float64) change {
	var best change
	for g := range s.at {
		from := t.inst[g][0]
		loads := s.p.Groups[g].Load
		least := s.leastLoaded(g, swapWith)
		var mine, theirs []int
		for k, i := range s.at[g] {
			switch {
			case i == from:
				mine = append(mine, k)
			case least[i]:
				theirs = append(theirs, k)
			}
		}
		for _, k := range mine {
			for _, k2 := range theirs {
				d := s.at[g][k2]
				if loads[k2] >= loads[k] {
					continue
				}
				l := loads[k] - loads[k2]
				imb := s.imbalanceIf(t, g, from, d, l)
				m, r := s.delta(g, k, d)
				s.place(g, k, d)
				m2, r2 := s.delta(g, k2, from)
				s.place(g, k, from)
				c := change{kind: swap, g: g, k: k, d: d, k2: k2, from: from,
					gain: base - imb - s.weighted(s.moved+m+m2, s.remote+r+r2),
					flat: -2 * l * (s.load[g][d] - s.load[g][from] + l) / (s.ideal[g] * s.ideal[g])}
				if c.gain >= -1e-12 && c.better(best) && (c.gain > 1e-12 || c.flat > 1e-12) {
					best = c
				}
			}
		}
	}
	return best
}

// leastLoaded is the n least loaded instances of group g.
func (s *state) leastLoaded(g, n int) map[int]bool {
	idx := make([]int, len(s.load[g]))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(s.load[g][a], s.load[g][b]) })
	out := map[int]bool{}
	for _, i := range idx[:min(n, len(idx))] {
		out[i] = true
	}
	return out
}

// partnerProcs are the processes of key group k of g's flow partners
// that are placed.
func (s *state) partnerProcs(g, k int) map[int]bool {
	out := map[int]bool{}
	for _, fi := range s.adj[g][k] {
		if v, ok := s.partner(fi, Unit{g, k}); ok {
			if vi := s.at[v.Group][v.KeyGroup]; vi >= 0 {
				out[s.proc(v.Group, vi)] = true
			}
		}
	}
	return out
}
