package critical

// solve counts the paths of w's graph (n nodes; paths start at starts and
// end at ends) and sets each activity's CP and w.Paths. It returns the
// message edges it dropped to break a cycle, which only edges of no
// length between equal clocks can make.
func solve(w *Window, n int, starts, ends []int32) int {
	order, ok := topo(w.Activities, n)
	dropped := 0
	if !ok {
		kept := w.Activities[:0]
		for _, a := range w.Activities {
			if a.Message && a.Start == a.End {
				dropped++
				continue
			}
			kept = append(kept, a)
		}
		w.Activities = kept
		order, _ = topo(w.Activities, n)
	}
	out := csr(w.Activities, n)
	fwd := make([]count, n)
	for _, s := range starts {
		fwd[s] = one()
	}
	for _, u := range order {
		for _, k := range out.edges(u) {
			a := &w.Activities[k]
			if a.capacity() {
				fwd[a.to] = fwd[a.to].add(fwd[u])
			}
		}
	}
	bwd := make([]count, n)
	for _, e := range ends {
		bwd[e] = one()
	}
	for i := len(order) - 1; i >= 0; i-- {
		u := order[i]
		for _, k := range out.edges(u) {
			a := &w.Activities[k]
			if a.capacity() {
				bwd[u] = bwd[u].add(bwd[a.to])
			}
		}
	}
	var paths count
	for _, e := range ends {
		paths = paths.add(fwd[e])
	}
	w.Paths = paths.float()
	if paths.zero() {
		return dropped
	}
	span := float64(w.End - w.Start)
	for k := range w.Activities {
		a := &w.Activities[k]
		if !a.capacity() || a.End == a.Start {
			continue
		}
		c := fwd[a.from].mul(bwd[a.to])
		a.CP = ratio(c, paths) * float64(a.End-a.Start) / span
	}
	return dropped
}

// adjacency lists the edges out of each node.
type adjacency struct{ first, list []int32 }

func (g adjacency) edges(u int32) []int32 { return g.list[g.first[u]:g.first[u+1]] }

func csr(acts []Activity, n int) adjacency {
	g := adjacency{first: make([]int32, n+1), list: make([]int32, len(acts))}
	for _, a := range acts {
		g.first[a.from+1]++
	}
	for i := range n {
		g.first[i+1] += g.first[i]
	}
	fill := append([]int32(nil), g.first[:n]...)
	for k, a := range acts {
		g.list[fill[a.from]] = int32(k)
		fill[a.from]++
	}
	return g
}

// topo returns the nodes in a topological order (Kahn), and false if the
// graph has a cycle.
func topo(acts []Activity, n int) ([]int32, bool) {
	g := csr(acts, n)
	in := make([]int32, n)
	for _, a := range acts {
		in[a.to]++
	}
	order := make([]int32, 0, n)
	for u := range n {
		if in[u] == 0 {
			order = append(order, int32(u))
		}
	}
	for i := 0; i < len(order); i++ {
		for _, k := range g.edges(order[i]) {
			v := acts[k].to
			if in[v]--; in[v] == 0 {
				order = append(order, v)
			}
		}
	}
	return order, len(order) == n
}
