package placement

import "slices"

// Exact returns the assignment of least cost, by branch and bound over
// the key groups heaviest first (each tried on its current owner first,
// then the least loaded instances), starting from the heuristic's cost;
// false when it gave up after visiting nodes nodes.
func Exact(p Problem, nodes int) (Assignment, bool, error) {
	h, err := Heuristic(p)
	if err != nil {
		return nil, false, err
	}
	s := newState(p, nil)
	var order []Unit
	for g, gr := range p.Groups {
		for k := range gr.Load {
			order = append(order, Unit{g, k})
		}
	}
	heaviestFirst(p, order)
	b := &bnb{s: s, order: order, best: h, bestCost: newState(p, h).cost().Total, left: nodes}
	b.search(0)
	return b.best, b.left >= 0, nil
}

type bnb struct {
	s        *state
	order    []Unit
	best     Assignment
	bestCost float64
	left     int
}

// search places order[n:] below the partial assignment in b.s.
func (b *bnb) search(n int) {
	if b.left--; b.left < 0 {
		return
	}
	s := b.s
	// Every term only grows as key groups are placed: the partial cost
	// bounds every completion's.
	if s.cost().Total >= b.bestCost-1e-12 {
		return
	}
	if n == len(b.order) {
		b.best, b.bestCost = s.assignment(), s.cost().Total
		return
	}
	u := b.order[n]
	g, k := u.Group, u.KeyGroup
	cand := make([]int, 0, len(s.load[g]))
	for d := range s.load[g] {
		cand = append(cand, d)
	}
	o := s.orig[g][k]
	slices.SortStableFunc(cand, func(x, y int) int {
		switch {
		case x == o:
			return -1
		case y == o:
			return 1
		case s.load[g][x] < s.load[g][y]:
			return -1
		case s.load[g][x] > s.load[g][y]:
			return 1
		}
		return 0
	})
	for _, d := range cand {
		s.place(g, k, d)
		b.search(n + 1)
		s.unplace(g, k)
	}
}
