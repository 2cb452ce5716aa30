package migrate

import (
	"slices"
)

// A batched plan is an edge colouring of the bipartite multigraph whose
// left vertices are the instances as sources, whose right vertices are the
// instances as destinations, and whose edges are the moves: a colour class
// is a matching, one step. König's theorem says Δ colours suffice, Δ the
// largest degree; colouring edge by edge and recolouring one alternating
// path when the two ends have no common free colour finds such a colouring.
// A cap of m moves per step needs at least ceil(E/m) steps too; a bipartite
// graph can be coloured with any k ≥ Δ colours so that no class holds more
// than ceil(E/k) edges, which swapping the colours along alternating paths
// of the largest and the smallest class reaches. Both bounds are lower
// bounds for any plan of matchings, so the step count is the least there is.
type colouring struct {
	n       int        // instances: source i is vertex i, destination j is vertex n+j
	ends    [][2]int32 // the two vertices of each edge
	colour  []int32
	at      [][]int32 // per vertex, the edge of each colour or -1; nil without edges
	members [][]int32 // per colour, its edges (once colouring is done)
	pos     []int32   // each edge's index in members[colour]
	seen    []int32   // per edge, the last pass that visited it
	pass    int32
}

// batch splits moves into matchings, as few as the cap allows. Each edge
// is a bundle of up to PerPair moves between the same two instances.
func batch(moves []Move, n int, o Options) [][]Move {
	edges := bundle(moves, max(o.PerPair, 1))
	c := newColouring(edges, n)
	delta := 0
	for _, a := range c.at {
		delta = max(delta, cap(a))
	}
	k := delta
	if m := o.MaxPerStep; m > 0 {
		k = max(k, (len(edges)+m-1)/m)
	}
	for v, a := range c.at {
		if a != nil {
			c.at[v] = slices.Repeat([]int32{-1}, k)
		}
	}
	for e := range c.ends {
		c.add(int32(e), delta)
	}
	c.members = make([][]int32, k)
	c.pos = make([]int32, len(edges))
	for e, col := range c.colour {
		c.pos[e] = int32(len(c.members[col]))
		c.members[col] = append(c.members[col], int32(e))
	}
	if o.MaxPerStep > 0 {
		c.equalize(o.MaxPerStep)
	}
	if o.Sizes != nil {
		weight := make([]int64, len(edges))
		for e, ms := range edges {
			for _, m := range ms {
				weight[e] += o.Sizes[m.KeyGroup]
			}
		}
		c.balance(weight, o.MaxPerStep)
	}
	var out [][]Move
	for _, es := range c.members {
		if len(es) == 0 {
			continue
		}
		var step []Move
		for _, e := range es {
			step = append(step, edges[e]...)
		}
		slices.SortFunc(step, func(a, b Move) int { return int(a.KeyGroup) - int(b.KeyGroup) })
		out = append(out, step)
	}
	return out
}

// bundle groups the moves between each pair of instances, in key-group
// order, into bundles of at most per moves.
func bundle(moves []Move, per int) [][]Move {
	type pair struct{ from, to int }
	open := map[pair]int{} // the pair's last bundle, while it has room
	var out [][]Move
	for _, m := range moves {
		p := pair{m.From, m.To}
		if i, ok := open[p]; ok && len(out[i]) < per {
			out[i] = append(out[i], m)
			continue
		}
		open[p] = len(out)
		out = append(out, []Move{m})
	}
	return out
}

// newColouring sets up the graph; at[v] is sized by v's degree (as its
// capacity) until batch replaces it.
func newColouring(edges [][]Move, n int) *colouring {
	c := &colouring{n: n, ends: make([][2]int32, len(edges)), colour: make([]int32, len(edges)),
		at: make([][]int32, 2*n), seen: make([]int32, len(edges)), pass: 1}
	deg := make([]int, 2*n)
	for e, ms := range edges {
		m := ms[0]
		c.ends[e] = [2]int32{int32(m.From), int32(n + m.To)}
		deg[m.From]++
		deg[n+m.To]++
	}
	for v, d := range deg {
		if d > 0 {
			c.at[v] = make([]int32, 0, d)
		}
	}
	return c
}

func (c *colouring) free(v int32, colours int) int32 {
	for col, e := range c.at[v][:colours] {
		if e < 0 {
			return int32(col)
		}
	}
	panic("migrate: a vertex of degree at most Δ has no free colour among Δ")
}

// add colours edge e with one of the first delta colours, recolouring an
// alternating path if its ends have no free colour in common.
func (c *colouring) add(e int32, delta int) {
	u, v := c.ends[e][0], c.ends[e][1]
	a, b := c.free(u, delta), c.free(v, delta)
	if c.at[v][a] >= 0 {
		// The a/b path from v cannot reach u (u lacks a, and the path
		// enters u's side by a-edges), so flipping it frees a at v only.
		c.flip(c.walk(v, a, b), a, b)
	}
	c.colour[e] = a
	c.at[u][a], c.at[v][a] = e, e
}

func other(e int32, ends [2]int32, x int32) int32 {
	if ends[0] == x {
		return ends[1]
	}
	return ends[0]
}

// walk follows the path from x that starts with colour first and
// alternates first and second, up to its end or an edge seen in this pass.
func (c *colouring) walk(x, first, second int32) []int32 {
	var path []int32
	for col := first; ; col = first + second - col {
		e := c.at[x][col]
		if e < 0 || c.seen[e] == c.pass {
			return path
		}
		c.seen[e] = c.pass
		path = append(path, e)
		x = other(e, c.ends[e], x)
	}
}

// flip swaps colours a and b on the edges of path.
func (c *colouring) flip(path []int32, a, b int32) {
	for _, e := range path {
		for _, x := range c.ends[e] {
			c.at[x][c.colour[e]] = -1
		}
		if c.members != nil {
			c.leave(e)
		}
	}
	for _, e := range path {
		col := a + b - c.colour[e]
		c.colour[e] = col
		for _, x := range c.ends[e] {
			c.at[x][col] = e
		}
		if c.members != nil {
			c.pos[e] = int32(len(c.members[col]))
			c.members[col] = append(c.members[col], e)
		}
	}
	c.pass++
}

// leave takes e out of its colour's members.
func (c *colouring) leave(e int32) {
	ms := c.members[c.colour[e]]
	last := ms[len(ms)-1]
	ms[c.pos[e]] = last
	c.pos[last] = c.pos[e]
	c.members[c.colour[e]] = ms[:len(ms)-1]
}

// extremes returns the colours of the most and the fewest edges.
func (c *colouring) extremes() (big, small int32) {
	for col, es := range c.members {
		if len(es) > len(c.members[big]) {
			big = int32(col)
		}
		if len(es) < len(c.members[small]) {
			small = int32(col)
		}
	}
	return big, small
}

// equalize recolours until no class holds more than m edges. With k
// classes and k*m >= E, a class above m means one at most m-1, and the
// classes' union then has a path with one edge more of the large class:
// flipping it moves one edge from the large class to the small one.
func (c *colouring) equalize(m int) {
	for {
		a, b := c.extremes()
		if len(c.members[a]) <= m {
			return
		}
		c.pass++
		done := false
		for _, e := range c.members[a] {
			for _, x := range c.ends[e] {
				if c.at[x][b] >= 0 || c.seen[e] == c.pass {
					continue
				}
				path := c.walk(x, a, b)
				if len(path)%2 == 1 {
					c.flip(path, a, b)
					done = true
					break
				}
			}
			if done {
				break
			}
		}
		if !done {
			panic("migrate: no alternating path between the largest and the smallest class")
		}
	}
}
