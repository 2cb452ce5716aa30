package migrate

import "slices"

// balance evens out the bytes (weight per edge) of the colour classes without changing
// their number or breaking the cap m (0: none). The union of two classes
// is a set of alternating paths and even cycles, and swapping the colours
// of any one of them leaves both classes matchings. Each round takes the
// heaviest class and, lightest partner first, swaps the component that
// lowers the heavier of the pair the most; it stops when no swap lowers
// the heaviest class. Every swap lowers the sorted vector of class bytes,
// so it ends; rounds are bounded as well.
func (c *colouring) balance(weight []int64, m int) {
	k := len(c.members)
	bytes := make([]int64, k)
	for e, col := range c.colour {
		bytes[col] += weight[e]
	}
	order := make([]int32, k)
	for round := 0; round < len(weight)+k; round++ {
		h := int32(slices.Index(bytes, slices.Max(bytes)))
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortFunc(order, func(a, b int32) int { return cmp64(bytes[a], bytes[b]) })
		swapped := false
		for _, b := range order {
			if b == h || bytes[b] >= bytes[h] {
				break
			}
			if comp, d := c.bestSwap(weight, bytes, h, b, m); comp != nil {
				c.flip(comp, h, b)
				bytes[h] -= d
				bytes[b] += d
				swapped = true
				break
			}
		}
		if !swapped {
			return
		}
	}
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// bestSwap returns the component of classes h and b whose swap lowers
// max(bytes[h], bytes[b]) the most within the cap, and the bytes it moves
// from h to b; nil if none lowers it.
func (c *colouring) bestSwap(weight, bytes []int64, h, b int32, m int) ([]int32, int64) {
	c.pass++
	var best []int32
	var bestD int64
	bestMax := bytes[h]
	for _, cls := range [2]int32{h, b} {
		for i := 0; i < len(c.members[cls]); i++ {
			e := c.members[cls][i]
			if c.seen[e] == c.pass {
				continue
			}
			comp := c.component(e, h, b)
			var d int64
			dn := 0
			for _, f := range comp {
				if c.colour[f] == h {
					d += weight[f]
					dn++
				} else {
					d -= weight[f]
					dn--
				}
			}
			if m > 0 && (len(c.members[h])-dn > m || len(c.members[b])+dn > m) {
				continue
			}
			if hi := max(bytes[h]-d, bytes[b]+d); hi < bestMax {
				best, bestD, bestMax = comp, d, hi
			}
		}
	}
	return best, bestD
}

// component returns the alternating path or cycle of colours h and b
// through edge e, marking its edges seen in this pass.
func (c *colouring) component(e, h, b int32) []int32 {
	c.seen[e] = c.pass
	comp := []int32{e}
	next := h + b - c.colour[e]
	for _, x := range c.ends[e] {
		comp = append(comp, c.walk(x, next, c.colour[e])...)
	}
	return comp
}
