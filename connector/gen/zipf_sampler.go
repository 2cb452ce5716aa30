package gen

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"sync"
	"weak"
)

// ZipfSampler draws ranks from a Zipf distribution over a finite set of
// keys: rank k in [0, keys) has probability (k+1)^-s / Σ_j (j+1)^-s, so rank
// 0 is the most frequent. Unlike math/rand/v2's Zipf it accepts any exponent
// s > 0, including s ≤ 1.
//
// It uses Walker's alias method, exact up to float64 rounding of the
// probabilities: building takes O(keys) time and 12 bytes per key, a draw
// takes one 64-bit random number and O(1) time. A ZipfSampler is immutable
// and safe for concurrent use.
type ZipfSampler struct {
	n uint64
	// A draw picks column i uniformly, then keeps i with probability
	// keep[i]/2^64 and otherwise returns alias[i].
	keep  []uint64
	alias []uint32
}

// NewZipfSampler builds the sampler of keys ranks with exponent s. It panics
// unless 1 ≤ keys ≤ 2^32 and s is finite and > 0.
func NewZipfSampler(keys int, s float64) *ZipfSampler {
	if err := checkZipf(keys, s); err != nil {
		panic("gen.NewZipfSampler: " + err.Error())
	}
	n := keys
	// Scaled probabilities n·p_k, summing the weights from the smallest for
	// accuracy.
	p := make([]float64, n)
	var sum float64
	for k := n - 1; k >= 0; k-- {
		p[k] = math.Pow(float64(k+1), -s)
		sum += p[k]
	}
	for k := range p {
		p[k] *= float64(n) / sum
	}

	// Vose's construction. work holds two stacks: the columns below 1 grow
	// from the front, the others from the back.
	z := &ZipfSampler{n: uint64(n), keep: make([]uint64, n), alias: make([]uint32, n)}
	work := make([]uint32, n)
	small, large := 0, n
	for k, pk := range p {
		z.alias[k] = uint32(k)
		if pk < 1 {
			work[small] = uint32(k)
			small++
		} else {
			large--
			work[large] = uint32(k)
		}
	}
	for small > 0 && large < n {
		small--
		l := work[small]
		g := work[large]
		large++
		z.keep[l] = toFraction(p[l])
		z.alias[l] = g
		p[g] = (p[g] + p[l]) - 1
		if p[g] < 1 {
			work[small] = g
			small++
		} else {
			large--
			work[large] = g
		}
	}
	// Whatever is left is 1 up to rounding.
	for _, k := range work[:small] {
		z.keep[k] = math.MaxUint64
	}
	for _, k := range work[large:] {
		z.keep[k] = math.MaxUint64
	}
	return z
}

func checkZipf(keys int, s float64) error {
	if keys < 1 || uint64(keys) > 1<<32 {
		return fmt.Errorf("keys is %d, want 1 ≤ keys ≤ 2^32", keys)
	}
	if !(s > 0) || math.IsInf(s, 0) {
		return fmt.Errorf("exponent is %v, want a finite number > 0", s)
	}
	return nil
}

// toFraction converts p in [0, 1] to a 64-bit fixed-point fraction.
func toFraction(p float64) uint64 {
	if p >= 1 {
		return math.MaxUint64
	}
	return uint64(max(p, 0) * 0x1p64)
}

// Keys returns the number of ranks.
func (z *ZipfSampler) Keys() int { return int(z.n) }

// Sample draws a rank in [0, Keys()).
func (z *ZipfSampler) Sample(r *rand.Rand) uint64 { return z.sample(r.Uint64()) }

// sample maps 64 uniform random bits to a rank: the high part of u·n picks
// the column, the low part is the uniform coin within it.
func (z *ZipfSampler) sample(u uint64) uint64 {
	col, frac := bits.Mul64(u, z.n)
	if frac < z.keep[col] {
		return col
	}
	return uint64(z.alias[col])
}

type zipfKey struct {
	keys int
	s    float64
}

// zipfCache lets the instances of a source share one sampler while any of
// them is open.
var zipfCache struct {
	sync.Mutex
	m map[zipfKey]weak.Pointer[ZipfSampler]
}

// sharedZipfSampler returns the sampler for (keys, s), building it unless a
// live one exists.
func sharedZipfSampler(keys int, s float64) *ZipfSampler {
	k := zipfKey{keys, s}
	zipfCache.Lock()
	defer zipfCache.Unlock()
	if z := zipfCache.m[k].Value(); z != nil {
		return z
	}
	z := NewZipfSampler(keys, s)
	if zipfCache.m == nil {
		zipfCache.m = make(map[zipfKey]weak.Pointer[ZipfSampler])
	}
	zipfCache.m[k] = weak.Make(z)
	runtime.AddCleanup(z, func(k zipfKey) {
		zipfCache.Lock()
		defer zipfCache.Unlock()
		if zipfCache.m[k].Value() == nil {
			delete(zipfCache.m, k)
		}
	}, k)
	return z
}
