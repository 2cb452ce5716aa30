package ds2

import (
	"container/heap"
	"math"
	"slices"
)

// packed is the smallest parallelism, from lower on, at which the key
// groups of counts (their shares of the input) fit instances of capacity
// at input records per second, each key group whole on one instance,
// placed heaviest first onto the least loaded instance. A key group that
// alone exceeds capacity is hot: it takes an instance of its own, the
// others are packed as before (more instances would serve nothing), and
// the heaviest hot one is returned.
func packed(counts []float64, input, capacity float64, lower int) (int, *Hot) {
	var total float64
	for _, c := range counts {
		total += c
	}
	if total == 0 || input == 0 {
		return lower, nil
	}
	need := make([]float64, 0, len(counts))
	hot, alone := -1, 0
	for g, c := range counts {
		if c == 0 {
			continue
		}
		n := input * c / total
		if n > capacity*(1+1e-9) {
			alone++
			if hot < 0 || c > counts[hot] {
				hot = g
			}
			continue
		}
		need = append(need, n)
	}
	slices.SortFunc(need, func(a, b float64) int {
		switch {
		case a > b:
			return -1
		case a < b:
			return 1
		}
		return 0
	})
	var rest float64
	for _, n := range need {
		rest += n
	}
	p := 0
	if len(need) > 0 {
		// Every key group on an instance of its own always fits.
		for p = max(1, ceil(rest/capacity)); p < len(need); p++ {
			if Makespan(need, p) <= capacity*(1+1e-9) {
				break
			}
		}
	}
	if hot < 0 {
		return max(lower, p), nil
	}
	// More instances than the hot key groups' own and the rest's would
	// not serve them.
	return alone + p, &Hot{KeyGroup: hot, Need: input * counts[hot] / total, Capacity: capacity}
}

// Makespan is the largest instance load when loads, heaviest first, go
// one by one onto the least loaded of p instances (LPT: within 4/3 of the
// best possible); +Inf for fewer than one instance. loads must be sorted
// heaviest first.
func Makespan(loads []float64, p int) float64 {
	if p < 1 {
		return math.Inf(1)
	}
	h := make(binHeap, p)
	var most float64
	for _, l := range loads {
		h[0] += l
		most = max(most, h[0])
		heap.Fix(&h, 0)
	}
	return most
}

// binHeap is instance loads, the least loaded first.
type binHeap []float64

func (h binHeap) Len() int           { return len(h) }
func (h binHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h binHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *binHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *binHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
