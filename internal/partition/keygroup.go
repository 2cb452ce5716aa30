package partition

import "fmt"

// KeyGroup is the unit of keyed state and routing.
type KeyGroup uint32

// DefaultKeyGroups is the number of key groups when a job does not choose.
const DefaultKeyGroups = 128

// KeyGroupOf maps a key hash to one of k key groups. It uses the high bits
// of a multiplication (Lemire's range reduction), which is uniform for a
// well-mixed hash and cheaper than a modulo.
func KeyGroupOf(hash uint64, k int) KeyGroup {
	hi, _ := mul64(hash, uint64(k))
	return KeyGroup(hi)
}

// Owner returns the instance, among p, that owns key group kg of k. The
// ranges are contiguous: instance i owns [i*k/p, (i+1)*k/p) rounded as
// Flink's KeyGroupRangeAssignment does.
func Owner(kg KeyGroup, k, p int) int {
	return int(kg) * p / k
}

// Range is the half-open interval of key groups [Start, End).
type Range struct {
	Start, End KeyGroup
}

// RangeOf returns the key groups owned by instance i of p, for k key groups.
func RangeOf(i, k, p int) Range {
	// Smallest kg with kg*p/k >= i is ceil(i*k/p).
	start := (i*k + p - 1) / p
	end := ((i+1)*k + p - 1) / p
	return Range{KeyGroup(start), KeyGroup(end)}
}

// Contains reports whether kg lies in r.
func (r Range) Contains(kg KeyGroup) bool { return kg >= r.Start && kg < r.End }

// Len is the number of key groups in r.
func (r Range) Len() int { return int(r.End - r.Start) }

func (r Range) String() string { return fmt.Sprintf("[%d,%d)", r.Start, r.End) }

func mul64(a, b uint64) (hi, lo uint64) {
	const mask32 = 1<<32 - 1
	a0 := a & mask32
	a1 := a >> 32
	b0 := b & mask32
	b1 := b >> 32
	w0 := a0 * b0
	t := a1*b0 + w0>>32
	w1 := t & mask32
	w2 := t >> 32
	w1 += a0 * b1
	hi = a1*b1 + w2 + w1>>32
	lo = a * b
	return
}
