package window

import "math"

// Event times are int64 milliseconds, and math.MinInt64 and math.MaxInt64
// stand for -inf and +inf: the watermark before any record and after the
// end of the input. Arithmetic on times saturates at those two values
// instead of wrapping. A saturated result is one of the infinities, which
// keeps the comparisons right: a watermark below the smallest time is -inf
// (nothing is late or due), a cleanup time above the largest is +inf (the
// window is kept until the input ends). Real times never equal the
// infinities (see Spec.Range), so nothing fires, is dropped or is late
// merely because a result saturated.

// AddSat returns a+b, or math.MaxInt64 or math.MinInt64 where that
// overflows.
func AddSat(a, b int64) int64 {
	c := a + b
	if (c > a) != (b > 0) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return c
}

// SubSat returns a-b, or math.MinInt64 or math.MaxInt64 where that
// overflows.
func SubSat(a, b int64) int64 {
	c := a - b
	if (c < a) != (b > 0) {
		if b > 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return c
}

// Watermark is the watermark after records up to maxTs with an
// out-of-orderness bound of bound ms (bound >= 0): maxTs-bound-1, so that a
// record exactly bound late is still on time. It saturates at
// math.MinInt64, -inf: no time is at or below it. For maxTs below
// math.MaxInt64 it is below math.MaxInt64-1, so it never reaches +inf, the
// watermark of the end of the input.
func Watermark(maxTs, bound int64) int64 {
	return SubSat(SubSat(maxTs, bound), 1)
}

// mod is a mod d in [0, d), for d > 0.
func mod(a, d int64) int64 {
	r := a % d
	if r < 0 {
		r += d
	}
	return r
}

// floorTo is the largest multiple of d (d > 0) at or below a; ok is false
// if that is below math.MinInt64.
func floorTo(a, d int64) (m int64, ok bool) {
	r := mod(a, d)
	if a < math.MinInt64+r {
		return 0, false
	}
	return a - r, true
}

// ceilMin is the smallest multiple of d (d > 0) at or above math.MinInt64.
func ceilMin(d int64) int64 {
	if r := mod(math.MinInt64, d); r != 0 {
		return math.MinInt64 + (d - r)
	}
	return math.MinInt64
}
