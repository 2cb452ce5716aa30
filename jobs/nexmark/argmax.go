package nexmark

import "slices"

// argMax is the largest of some numbers and the items that have it: q7's
// accumulator of a window's highest bids (weir.ArgMax ranks window
// results by key, and q7 needs the records themselves). Its array is
// never written in place, so that accumulators never share one.
type argMax[T any] struct {
	Max int64
	Of  []T
}

// add counts item v with number m.
func (a argMax[T]) add(m int64, v T) argMax[T] {
	switch {
	case len(a.Of) == 0 || m > a.Max:
		return argMax[T]{m, []T{v}}
	case m == a.Max:
		return argMax[T]{m, append(a.Of[:len(a.Of):len(a.Of)], v)}
	}
	return a
}

// merge combines two accumulators: the larger, or both on a tie.
func (a argMax[T]) merge(b argMax[T]) argMax[T] {
	switch {
	case b.Max > a.Max:
		return b
	case b.Max < a.Max:
		return a
	}
	return argMax[T]{a.Max, slices.Concat(a.Of, b.Of)}
}
