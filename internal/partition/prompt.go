package partition

import (
	"cmp"
	"fmt"
	"slices"
)

// prompt is Planner.Prompt: Prompt's frequency-aware greedy as this
// package reads it (PAPERS.md, "Prompt"). With n records, D keys and N
// blocks, the target of a block is T = ceil(n/N) records, and a key is
// hot when its count exceeds the mean n/D.
//
// Phase 1 spreads the hot keys, in non-increasing count: a key goes whole
// into the block with the most room (T minus its load) when it fits;
// otherwise it fills that block and goes on with the rest into the block
// with the next most room, so that it gets as few fragments as the rooms
// allow, each in a different block. Whole keys leave rooms behind, and
// rooms can become so small that a later key would need more than
// ceil(count/T)+1 fragments; Prompt's phase 3 would then put the remainder
// above T in the emptiest block. Here instead phase 1 starts again and
// packs the hot keys end to end (block 0 filled to T, then block 1, ...),
// which keeps every block within T and cuts each hot key into at most
// ceil(count/T)+1 fragments, at the price of concentrating the hot keys in
// fewer blocks. So no block exceeds T after phase 1, and Prompt's phase 3
// is never needed.
//
// Phase 2 places the cold keys whole, in non-increasing count, zig-zag
// over the blocks that still have room (0..N-1, N-1..0, 0..), which
// balances records and distinct keys at once. A cold key only goes into a
// block under T, so the largest block holds at most T-1 plus the largest
// cold count, below n/N + n/D: when D >= 20N the map imbalance is at most
// 1.05. (Blocks under T remain while records remain, as N*T >= n.)
//
// Reducers receive one partial per fragment. With F fragments and R
// reducers each takes at most C = ceil(F/R): the split keys, by
// non-increasing number of fragments, go whole to the least loaded reducer
// when they fit under C, else fill it to C and go on with the next least
// loaded; the whole keys (one partial each) then fill the least loaded
// reducers level by level.
//
// Cost: O(D) for the counts and the order (a counting or radix sort, see
// sortByCount), O((H+F) log N) for phase 1 with H hot keys, O(D) for
// phase 2, O(S log S + F log R + R log R) for the reducers with S split
// keys.
func (p *Planner) prompt(counts, byCount []int32, base []int64, blocks, reducers int) *Plan {
	d := len(counts)
	pl := p.begin(Prompt, d, blocks, reducers)
	if d == 0 {
		return pl
	}
	var n int64
	var maxCount int32
	for g, c := range counts {
		checkCount(g, c)
		n += int64(c)
		maxCount = max(maxCount, c)
	}
	order := byCount
	if order == nil {
		order = p.sortByCount(counts, maxCount)
	} else if len(order) != d {
		panic(fmt.Sprintf("partition: Prompt plan with %d counts and %d keys by count", d, len(order)))
	}
	var rest int64
	for _, b := range base {
		rest += b
	}
	e := epochShape{counts: counts, order: order, n: n, d: int64(d), target: (n + rest + int64(blocks) - 1) / int64(blocks)}
	// The hot keys are a prefix of the order (all of it over base loads).
	for e.hotN < d && (base != nil || e.hot(counts[order[e.hotN]])) {
		e.hotN++
	}
	p.where = resize(p.where, d)
	p.nfrag = resize(p.nfrag, d)
	load := pl.BlockRecords
	copy(load, base)
	if !p.spreadHot(e, load) {
		clear(load)
		copy(load, base)
		p.packHot(e, load)
	}
	p.placeCold(e, load)
	p.layout(counts)
	p.assignReducers()
	return pl
}

// epochShape is what the phases share.
type epochShape struct {
	counts, order []int32
	n, d          int64 // records and keys
	target        int64 // T
	hotN          int   // order[:hotN] are the hot keys
}

func (e *epochShape) hot(c int32) bool { return int64(c)*e.d > e.n }

// place records where the i-th key of the order goes: in where, 0 is not
// placed yet, b+1 is whole in block b, and ^j for a hot key whose
// fragments start at p.hot[j]. A key that comes twice, or counts that go
// up, mean the caller's byCount is wrong.
func (p *Planner) place(e *epochShape, i int, w int32) {
	g := e.order[i]
	if p.where[g] != 0 {
		panic(fmt.Sprintf("partition: key %d listed twice by count", g))
	}
	if i > 0 && e.counts[e.order[i-1]] < e.counts[g] {
		panic(fmt.Sprintf("partition: keys by count list key %d (count %d) after key %d (count %d)",
			g, e.counts[g], e.order[i-1], e.counts[e.order[i-1]]))
	}
	p.where[g] = w
}

// spreadHot is phase 1, spreading. It reports false, leaving a partial
// placement, when a key would need more than ceil(count/T)+1 fragments.
func (p *Planner) spreadHot(e epochShape, load []int64) bool {
	p.hot = p.hot[:0]
	clear(p.where)
	h := &p.heap
	h.init(len(load), load) // the blocks with room, most room (least load) first
	for i, g := range e.order[:e.hotN] {
		c := e.counts[g]
		start := len(p.hot)
		if h.len() > 0 && int64(c) < e.target-load[h.top()] {
			b := h.top()
			// The usual case: whole, and the block keeps some room.
			p.hot = append(p.hot, Frag{Block: b, Count: c})
			load[b] += int64(c)
			h.fixTop()
			p.place(&e, i, ^int32(start))
			p.nfrag[g] = 1
			continue
		}
		limit := (int64(c)+e.target-1)/e.target + 1
		last := int32(-1)
		for rem := int64(c); rem > 0; {
			if int64(len(p.hot)-start) == limit {
				return false
			}
			if h.len() == 0 {
				panic("partition: no block has room for a hot key")
			}
			b := h.pop()
			take := min(rem, e.target-load[b])
			if take <= 0 {
				return false // blocks over T from their base loads alone
			}
			p.hot = append(p.hot, Frag{Block: b, Count: int32(take)})
			load[b] += take
			rem -= take
			last = b
		}
		// Every block but the last is full now, and stays out of the heap.
		if load[last] < e.target {
			h.push(last)
		}
		p.place(&e, i, ^int32(start))
		p.nfrag[g] = int32(len(p.hot) - start)
	}
	return true
}

// packHot is phase 1, packing: the hot keys end to end.
func (p *Planner) packHot(e epochShape, load []int64) {
	p.hot = p.hot[:0]
	clear(p.where)
	b := int32(0)
	for i, g := range e.order[:e.hotN] {
		start := len(p.hot)
		for rem := int64(e.counts[g]); rem > 0; {
			for load[b] >= e.target {
				b++
			}
			take := min(rem, e.target-load[b])
			p.hot = append(p.hot, Frag{Block: b, Count: int32(take)})
			load[b] += take
			rem -= take
		}
		p.place(&e, i, ^int32(start))
		p.nfrag[g] = int32(len(p.hot) - start)
	}
}

// placeCold is phase 2: the cold keys whole, zig-zag over the blocks under
// T, kept in a doubly linked list in block order from which a block leaves
// when it reaches T.
func (p *Planner) placeCold(e epochShape, load []int64) {
	nb := len(load)
	p.nextB, p.prevB = resize(p.nextB, nb), resize(p.prevB, nb)
	head, prev := int32(-1), int32(-1)
	for b := range int32(nb) {
		if load[b] >= e.target {
			continue
		}
		p.prevB[b] = prev
		if prev >= 0 {
			p.nextB[prev] = b
		} else {
			head = b
		}
		prev = b
	}
	if prev >= 0 {
		p.nextB[prev] = -1
	}
	cur, forward := head, true
	for i := e.hotN; i < len(e.order); i++ {
		g := e.order[i]
		c := e.counts[g]
		b := cur
		if b < 0 {
			// Every block is at T or above: no records remain, since
			// N*T >= n. Kept for safety.
			b = int32(argmin(load))
		}
		p.place(&e, i, b+1)
		load[b] += int64(c)
		if cur < 0 {
			continue
		}
		// The next block of the zig-zag; at either end the walk turns and
		// visits the end block again.
		var next int32
		if forward {
			if next = p.nextB[b]; next < 0 {
				forward, next = false, b
			}
		} else {
			if next = p.prevB[b]; next < 0 {
				forward, next = true, b
			}
		}
		if load[b] >= e.target {
			before, after := p.prevB[b], p.nextB[b]
			if before >= 0 {
				p.nextB[before] = after
			}
			if after >= 0 {
				p.prevB[after] = before
			}
			if next == b {
				if forward {
					next = after
				} else {
					next = before
				}
			}
		}
		cur = next
	}
}

func argmin(s []int64) int {
	m := 0
	for i, v := range s {
		if v < s[m] {
			m = i
		}
	}
	return m
}

// layout writes the plan's Index, Frags, BlockKeys and SplitKeys from the
// placement, and collects the split keys in p.multi.
func (p *Planner) layout(counts []int32) {
	pl := &p.plan
	p.multi = p.multi[:0]
	for g, c := range counts {
		pl.Index[g] = int32(len(pl.Frags))
		w := p.where[g]
		switch {
		case w == 0:
			panic(fmt.Sprintf("partition: key %d missing from the keys by count", g))
		case w > 0:
			pl.Frags = append(pl.Frags, Frag{Block: w - 1, Count: c})
			pl.BlockKeys[w-1]++
		default:
			start := int(^w)
			fs := p.hot[start : start+int(p.nfrag[g])]
			pl.Frags = append(pl.Frags, fs...)
			for _, f := range fs {
				pl.BlockKeys[f.Block]++
			}
			if len(fs) > 1 {
				pl.SplitKeys++
				p.multi = append(p.multi, int32(g))
			}
		}
	}
	pl.Index[len(counts)] = int32(len(pl.Frags))
}

// assignReducers gives every fragment a reducer, each reducer at most
// C = ceil(F/R) partials.
func (p *Planner) assignReducers() {
	pl := &p.plan
	r := int64(pl.Reducers)
	capacity := (int64(len(pl.Frags)) + r - 1) / r
	rl := pl.ReducerLoad
	nf := func(g int32) int32 { return pl.Index[g+1] - pl.Index[g] }
	slices.SortFunc(p.multi, func(a, b int32) int {
		return cmp.Or(cmp.Compare(nf(b), nf(a)), cmp.Compare(a, b))
	})
	h := &p.heap
	h.init(pl.Reducers, rl)
	for _, g := range p.multi {
		fs := pl.Frags[pl.Index[g]:pl.Index[g+1]]
		for len(fs) > 0 {
			if h.len() == 0 {
				panic("partition: every reducer is full")
			}
			x := h.pop()
			take := min(int64(len(fs)), capacity-rl[x])
			for i := range take {
				fs[i].Reducer = x
			}
			rl[x] += take
			fs = fs[take:]
			if rl[x] < capacity {
				h.push(x)
			}
		}
	}
	p.fillUnit(len(pl.Index) - 1 - len(p.multi))
}

// fillUnit gives the keys of one fragment to reducers as a least-loaded
// greedy would, in O(R log R + D): the least loaded reducers are raised
// together, level by level, until the u partials are gone.
func (p *Planner) fillUnit(u int) {
	pl := &p.plan
	rl := pl.ReducerLoad
	s := resize(p.byLoad, pl.Reducers)
	p.byLoad = s
	for i := range s {
		s[i] = int32(i)
	}
	slices.SortFunc(s, func(a, b int32) int { return cmp.Or(cmp.Compare(rl[a], rl[b]), cmp.Compare(a, b)) })
	rem, level, k := int64(u), rl[s[0]], 0
	for {
		for k < len(s) && rl[s[k]] <= level {
			k++
		}
		if k == len(s) {
			break
		}
		need := (rl[s[k]] - level) * int64(k)
		if rem < need {
			break
		}
		rem -= need
		level = rl[s[k]]
	}
	// Reducers s[:k] end at level+q, the first extra of them one more.
	q, extra := rem/int64(k), int(rem%int64(k))
	level += q
	j := 0
	goal := func(j int) int64 {
		if j < extra {
			return level + 1
		}
		return level
	}
	for g := range len(pl.Index) - 1 {
		lo := pl.Index[g]
		if pl.Index[g+1]-lo != 1 {
			continue
		}
		for rl[s[j]] >= goal(j) {
			j++
		}
		pl.Frags[lo].Reducer = s[j]
		rl[s[j]]++
	}
}
