package window

import "math"

// Range is the closed range [lo, hi] of the event times the spec can hold:
// every window a time in it belongs to starts at or after math.MinInt64 and
// ends at or before math.MaxInt64, so that its bounds are exact int64s. It
// never includes math.MinInt64 or math.MaxInt64, which stand for -inf and
// +inf. For a spec that does not validate it is the range of any time.
//
//   - Tumbling (size S) and sliding (size S, slide D; tumbling is D = S):
//     windows start at multiples of D. lo is the first multiple of D at or
//     after math.MinInt64 plus S-D: a lower time would also belong to the
//     window starting D before it. hi is one below the start of the first
//     window that would end past math.MaxInt64. Both are within S of the
//     ends of int64.
//   - Session (gap G): [math.MinInt64+1, math.MaxInt64-G], so that ts+G, and
//     so the end of any merged session, is exact.
//   - Global: [math.MinInt64+1, math.MaxInt64-1].
//
// Within the range the window arithmetic is exact, and fire and cleanup
// times (end-1 and end-1+lateness) are at least end-1 and at most
// math.MaxInt64, saturating there.
func (s Spec) Range() (lo, hi int64) {
	lo, hi = math.MinInt64+1, math.MaxInt64-1
	size, slide := s.Size, s.Slide
	switch s.Kind {
	case Tumbling:
		slide = size
	case Sliding:
		if slide > size {
			return lo, hi
		}
	case Session:
		if s.Gap > 0 {
			hi = math.MaxInt64 - s.Gap
		}
		return lo, hi
	default:
		return lo, hi
	}
	if size <= 0 || slide <= 0 {
		return lo, hi
	}
	first := ceilMin(slide)
	last, _ := floorTo(math.MaxInt64-size, slide) // the last start whose end is exact
	return max(lo, first+(size-slide)), last + slide - 1
}

// ValidTime reports whether the spec can hold a record at ts: whether ts is
// in Range.
func (s Spec) ValidTime(ts int64) bool {
	lo, hi := s.Range()
	return lo <= ts && ts <= hi
}
