package partition

import (
	"fmt"
	"math/bits"
)

// KeyGroup is the unit of keyed state and routing.
type KeyGroup uint32

// DefaultKeyGroups is the number of key groups when a job does not choose.
const DefaultKeyGroups = 128

// KeyGroupOf maps a key hash to one of k key groups. It uses the high bits
// of a multiplication (Lemire's range reduction), which is uniform for a
// well-mixed hash and cheaper than a modulo.
func KeyGroupOf(hash uint64, k int) KeyGroup {
	hi, _ := bits.Mul64(hash, uint64(k))
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
