package critical

import "math"

// count is a non-negative number m·2^e with m in [0.5, 1) (or 0): a path
// count that neither overflows nor underflows.
type count struct {
	m float64
	e int
}

func one() count { return count{0.5, 1} }

func norm(m float64, e int) count {
	if m == 0 {
		return count{}
	}
	f, x := math.Frexp(m)
	return count{f, e + x}
}

func (a count) zero() bool { return a.m == 0 }

func (a count) add(b count) count {
	if a.m == 0 {
		return b
	}
	if b.m == 0 {
		return a
	}
	if a.e < b.e {
		a, b = b, a
	}
	if a.e-b.e > 64 {
		return a
	}
	return norm(a.m+math.Ldexp(b.m, b.e-a.e), a.e)
}

func (a count) mul(b count) count {
	if a.m == 0 || b.m == 0 {
		return count{}
	}
	return norm(a.m*b.m, a.e+b.e)
}

// ratio returns a/b as a float64 (b non-zero).
func ratio(a, b count) float64 {
	if a.m == 0 {
		return 0
	}
	return math.Ldexp(a.m/b.m, a.e-b.e)
}

// float returns a as a float64, +Inf beyond its range.
func (a count) float() float64 { return math.Ldexp(a.m, a.e) }
