package placement

// state is an assignment under construction, with what its cost needs
// kept up to date: instances are indices into their group's Instances,
// and -1 is a key group not placed yet.
type state struct {
	p          Problem
	at         [][]int     // per group, per key group: instance index, or -1
	orig       [][]int     // per group, per key group: the current owner's index, or -1
	load       [][]float64 // per group, per instance index
	ideal      []float64   // per group
	adj        [][][]int   // per group, per key group: indices of its flows
	totalBytes int64
	totalFlow  float64
	moved      int64
	remote     float64
}

func newState(p Problem, a Assignment) *state {
	s := &state{p: p, at: make([][]int, len(p.Groups)), orig: make([][]int, len(p.Groups)),
		load: make([][]float64, len(p.Groups)), ideal: make([]float64, len(p.Groups)), adj: make([][][]int, len(p.Groups))}
	for g, gr := range p.Groups {
		idx := map[int]int{}
		for i, in := range gr.Instances {
			idx[in.ID] = i
		}
		s.at[g], s.orig[g] = make([]int, len(gr.Load)), make([]int, len(gr.Load))
		s.load[g], s.adj[g] = make([]float64, len(gr.Instances)), make([][]int, len(gr.Load))
		var total, most float64
		for k, l := range gr.Load {
			s.at[g][k], s.orig[g][k] = -1, -1
			if gr.Current != nil {
				if i, ok := idx[gr.Current[k]]; ok {
					s.orig[g][k] = i
				}
			}
			total, most = total+l, max(most, l)
			s.totalBytes += s.bytes(g, k)
		}
		s.ideal[g] = max(total/float64(len(gr.Instances)), most)
		if s.ideal[g] == 0 {
			s.ideal[g] = 1
		}
	}
	for i, f := range p.Flows {
		s.adj[f.From.Group][f.From.KeyGroup] = append(s.adj[f.From.Group][f.From.KeyGroup], i)
		if f.To != f.From {
			s.adj[f.To.Group][f.To.KeyGroup] = append(s.adj[f.To.Group][f.To.KeyGroup], i)
		}
		s.totalFlow += f.Rate
	}
	if a != nil {
		for g := range a {
			idx := map[int]int{}
			for i, in := range p.Groups[g].Instances {
				idx[in.ID] = i
			}
			for k, id := range a[g] {
				s.place(g, k, idx[id])
			}
		}
	}
	return s
}

func (s *state) bytes(g, k int) int64 {
	if b := s.p.Groups[g].Bytes; b != nil {
		return b[k]
	}
	return 0
}

func (s *state) proc(g, i int) int { return s.p.Groups[g].Instances[i].Process }

// delta is what placing key group k of g on instance d (from where it is,
// or from nowhere) changes: moved bytes and remote flows.
func (s *state) delta(g, k, d int) (moved int64, remote float64) {
	from := s.at[g][k]
	if o := s.orig[g][k]; (from < 0 || from == o) && d != o {
		moved = s.bytes(g, k)
	} else if from >= 0 && from != o && d == o {
		moved = -s.bytes(g, k)
	}
	for _, fi := range s.adj[g][k] {
		v, ok := s.partner(fi, Unit{g, k})
		if !ok {
			continue
		}
		f := s.p.Flows[fi]
		vi := s.at[v.Group][v.KeyGroup]
		if vi < 0 {
			continue
		}
		pv := s.proc(v.Group, vi)
		before := from >= 0 && s.proc(g, from) != pv
		after := s.proc(g, d) != pv
		switch {
		case after && !before:
			remote += f.Rate
		case before && !after:
			remote -= f.Rate
		}
	}
	return moved, remote
}

// place puts key group k of g on instance d.
func (s *state) place(g, k, d int) {
	m, r := s.delta(g, k, d)
	s.moved += m
	s.remote += r
	if from := s.at[g][k]; from >= 0 {
		s.load[g][from] -= s.p.Groups[g].Load[k]
	}
	s.load[g][d] += s.p.Groups[g].Load[k]
	s.at[g][k] = d
}

// imbalance is the largest load over its group's ideal (at least 1).
func (s *state) imbalance() float64 {
	out := 1.0
	for g, ls := range s.load {
		for _, l := range ls {
			out = max(out, l/s.ideal[g])
		}
	}
	return out
}

// weighted is the cost of moved bytes and remote flows.
func (s *state) weighted(moved int64, remote float64) float64 {
	var c float64
	if s.totalBytes > 0 {
		c += s.p.Move * float64(moved) / float64(s.totalBytes)
	}
	if s.totalFlow > 0 {
		c += s.p.Traffic * remote / s.totalFlow
	}
	return c
}

func (s *state) cost() Cost {
	c := Cost{Imbalance: s.imbalance(), Moved: s.moved, Remote: s.remote}
	c.Total = c.Imbalance + s.weighted(s.moved, s.remote)
	return c
}

// assignment is the state as instance IDs.
func (s *state) assignment() Assignment {
	a := make(Assignment, len(s.at))
	for g, at := range s.at {
		a[g] = make([]int, len(at))
		for k, i := range at {
			a[g][k] = s.p.Groups[g].Instances[i].ID
		}
	}
	return a
}

// clone copies what placing changes.
func (s *state) clone() *state {
	c := *s
	c.at, c.load = make([][]int, len(s.at)), make([][]float64, len(s.load))
	for g := range s.at {
		c.at[g] = append([]int(nil), s.at[g]...)
		c.load[g] = append([]float64(nil), s.load[g]...)
	}
	return &c
}

// unplace takes key group k of g off its instance.
func (s *state) unplace(g, k int) {
	from := s.at[g][k]
	if from < 0 {
		return
	}
	if o := s.orig[g][k]; from != o {
		s.moved -= s.bytes(g, k)
	}
	for _, fi := range s.adj[g][k] {
		v, ok := s.partner(fi, Unit{g, k})
		if !ok {
			continue
		}
		f := s.p.Flows[fi]
		if vi := s.at[v.Group][v.KeyGroup]; vi >= 0 && s.proc(v.Group, vi) != s.proc(g, from) {
			s.remote -= f.Rate
		}
	}
	s.load[g][from] -= s.p.Groups[g].Load[k]
	s.at[g][k] = -1
}

// partner is the other end of flow fi from u; false for a flow from u
// to itself.
func (s *state) partner(fi int, u Unit) (Unit, bool) {
	f := s.p.Flows[fi]
	v := f.To
	if v == u {
		v = f.From
	}
	return v, v != u
}
