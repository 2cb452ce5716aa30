package prompt

import "github.com/weirstream/weir/internal/window"

// keySets is the windows of the keys a task touched in a round, indexed by
// global key number through a dense array.
type keySets[A any] struct {
	loc     []int32 // global key -> index in sets, or -1
	sets    []window.Set[A]
	touched []int32 // global keys, in the order of sets
}

// reset sizes the index for n global keys.
func (k *keySets[A]) reset(n int) { k.loc = growFill(k.loc, n) }

// Entry returns the window set of global key g.
func (k *keySets[A]) Entry(g int32) *window.Set[A] {
	li := k.loc[g]
	if li < 0 {
		li = int32(len(k.touched))
		k.loc[g] = li
		k.touched = append(k.touched, g)
		if len(k.sets) <= int(li) {
			k.sets = append(k.sets, window.Set[A]{})
		}
	}
	return &k.sets[li]
}

// drain calls f for every touched key's windows and forgets them.
func (k *keySets[A]) drain(f func(g int32, w *window.Win[A])) {
	for li, g := range k.touched {
		set := &k.sets[li]
		for i := range set.W {
			f(g, &set.W[i])
		}
		clear(set.W)
		set.W = set.W[:0]
		k.loc[g] = -1
	}
	k.touched = k.touched[:0]
}

// growFill returns s with length n, every element -1.
func growFill(s []int32, n int) []int32 {
	if cap(s) < n {
		s = make([]int32, n, n+n/4)
		for i := range s {
			s[i] = -1
		}
		return s
	}
	old := len(s)
	s = s[:n]
	for i := old; i < n; i++ {
		s[i] = -1
	}
	return s
}
