package partition

// Ordering keys by count without a comparison sort: a counting sort when
// the counts are small next to the number of keys (the usual case: a key's
// count rarely exceeds the number of keys much), else an LSD radix sort on
// 11-bit digits, at most three passes for int32 counts. Both are stable,
// so keys of equal count stay in increasing key order and the result is a
// function of the counts alone.

const radixBits = 11

// sortByCount returns the keys 0..len(counts)-1 in non-increasing order of
// count, ties in increasing key order. maxCount is the largest count. The
// result is p.order.
func (p *Planner) sortByCount(counts []int32, maxCount int32) []int32 {
	d := len(counts)
	p.order = resize(p.order, d)
	if int(maxCount) <= 2*d+1<<radixBits {
		// Counting sort; bucket v holds the keys of count maxCount-v.
		p.hist = resize(p.hist, int(maxCount)+1)
		clear(p.hist)
		for _, c := range counts {
			p.hist[maxCount-c]++
		}
		prefixSum(p.hist)
		for g, c := range counts {
			v := maxCount - c
			p.order[p.hist[v]] = int32(g)
			p.hist[v]++
		}
		return p.order
	}
	p.sortTmp = resize(p.sortTmp, d)
	for g := range counts {
		p.order[g] = int32(g)
	}
	src, dst := p.order, p.sortTmp
	p.hist = resize(p.hist, 1<<radixBits)
	for shift := uint(0); maxCount>>shift > 0; shift += radixBits {
		clear(p.hist)
		for _, g := range src {
			p.hist[((maxCount-counts[g])>>shift)&(1<<radixBits-1)]++
		}
		prefixSum(p.hist)
		for _, g := range src {
			v := ((maxCount - counts[g]) >> shift) & (1<<radixBits - 1)
			dst[p.hist[v]] = g
			p.hist[v]++
		}
		src, dst = dst, src
	}
	if &src[0] != &p.order[0] {
		copy(p.order, src)
	}
	return p.order
}

// prefixSum turns counts into starting offsets.
func prefixSum(h []int32) {
	var sum int32
	for i, c := range h {
		h[i] = sum
		sum += c
	}
}

// resize returns s with length n, reusing its array when it is big enough.
// The contents are not cleared.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}
