package partition

// Reweigh reassigns the plan's reducers when the partials are not all
// alike: weight(g, f) is what fragment f of key g will cost its reducer
// (the windows its records fall in, say, when an epoch spans several).
// Fragments are placed heaviest first on the least loaded reducer (LPT),
// so the largest load is at most the mean plus the heaviest fragment.
// ReducerLoad then holds the weighted loads. Weights must be positive;
// the heaviest orders the fragments by a counting sort, so keep them
// small (a few thousand at most).
func (p *Plan) Reweigh(weight func(g int, f Frag) int64, scratch *Reweigher) {
	s := scratch
	n := len(p.Frags)
	s.w = resize(s.w, n)
	var heaviest int64
	for g := range len(p.Index) - 1 {
		for i := p.Index[g]; i < p.Index[g+1]; i++ {
			w := weight(g, p.Frags[i])
			if w <= 0 {
				panic("partition: Reweigh with a weight <= 0")
			}
			s.w[i] = w
			heaviest = max(heaviest, w)
		}
	}
	// Counting sort of the fragments by descending weight.
	s.start = resize(s.start, int(heaviest)+2)
	clear(s.start)
	for _, w := range s.w {
		s.start[heaviest-w+1]++
	}
	for i := 1; i < len(s.start); i++ {
		s.start[i] += s.start[i-1]
	}
	s.order = resize(s.order, n)
	for i, w := range s.w {
		j := heaviest - w
		s.order[s.start[j]] = int32(i)
		s.start[j]++
	}
	clear(p.ReducerLoad)
	s.heap.init(p.Reducers, p.ReducerLoad)
	for _, i := range s.order {
		r := s.heap.top()
		p.Frags[i].Reducer = r
		p.ReducerLoad[r] += s.w[i]
		s.heap.fixTop()
	}
}

// Reweigher is Reweigh's memory, reused from one epoch to the next.
type Reweigher struct {
	w, start []int64
	order    []int32
	heap     minHeap
}
