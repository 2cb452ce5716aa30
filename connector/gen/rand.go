package gen

import (
	"math/bits"
	"strings"
)

// Every generated record is a pure function of the generator's seed and the
// record's global sequence number: the record's random draws come from a
// small splitmix64 stream keyed by (seed, sequence number). That is what
// makes the data independent of how the source is split into instances.

const golden = 0x9e3779b97f4a7c15 // 2^64 / φ, the splitmix64 increment

// Domains keep the streams of different generators (and of their tables)
// apart even when they share a seed.
const (
	domainYSB uint64 = iota + 1
	domainYSBAds
	domainZipf
	domainNexmark
	domainPools
)

// mix64 is the splitmix64 finaliser, a bijection on uint64 with good
// avalanche.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// streamKey derives the key of a generator's streams from its seed.
func streamKey(seed, domain uint64) uint64 {
	return mix64(mix64(seed^domain*golden) + domain)
}

// stream is a splitmix64 generator. It implements math/rand/v2's Source.
type stream struct{ s uint64 }

// newStream returns the stream of record seq under key.
func newStream(key, seq uint64) stream {
	return stream{mix64(key + seq*golden)}
}

// Uint64 returns the next 64 random bits.
func (r *stream) Uint64() uint64 {
	r.s += golden
	return mix64(r.s)
}

// intn returns a number in [0, n), n > 0, by multiply-shift; the bias is at
// most n/2^64.
func (r *stream) intn(n int) int {
	hi, _ := bits.Mul64(r.Uint64(), uint64(n))
	return int(hi)
}

// float64 returns a number in [0, 1).
func (r *stream) float64() float64 {
	return float64(r.Uint64()>>11) * 0x1p-53
}

// pick returns a uniformly chosen element of pool.
func pick(r *stream, pool []string) string {
	return pool[r.intn(len(pool))]
}

// appendUUID appends a version-4-style UUID (8-4-4-4-12 lowercase hex)
// made from the next 128 bits of r.
func appendUUID(dst []byte, r *stream) []byte {
	const hex = "0123456789abcdef"
	hi := r.Uint64()&^(0xf<<12) | 0x4<<12 // version 4
	lo := r.Uint64()&^(0x3<<62) | 0x2<<62 // RFC 4122 variant
	for i, v := range [2]uint64{hi, lo} {
		for j := 60; j >= 0; j -= 4 {
			if n := 16*i + (60-j)/4; n == 8 || n == 12 || n == 16 || n == 20 {
				dst = append(dst, '-')
			}
			dst = append(dst, hex[v>>j&0xf])
		}
	}
	return dst
}

// pool builds n strings with one allocation for their bytes: each is
// appended to a shared buffer by next and then sliced out of it.
func pool(n, sizeHint int, next func(dst []byte, i int) []byte) []string {
	buf := make([]byte, 0, n*sizeHint)
	ends := make([]int, n)
	for i := range n {
		buf = next(buf, i)
		ends[i] = len(buf)
	}
	all := string(buf)
	out := make([]string, n)
	start := 0
	for i, end := range ends {
		out[i] = all[start:end]
		start = end
	}
	return out
}

// uuidPool returns n distinct-with-overwhelming-probability UUIDs derived
// from key.
func uuidPool(key uint64, n int) []string {
	return pool(n, 36, func(dst []byte, i int) []byte {
		r := newStream(key, uint64(i))
		return appendUUID(dst, &r)
	})
}

// text is random lower-case text with a space about every 13 characters
// (never two in a row, never first); substrings of it stand in for the
// random words of a generator, without allocating.
type text string

func newText(key uint64, n int) text {
	var b strings.Builder
	b.Grow(n)
	r := newStream(key, 0)
	prev := byte(' ')
	for range n {
		c := byte('a' + r.intn(26))
		if prev != ' ' && r.intn(13) == 0 {
			c = ' '
		}
		b.WriteByte(c)
		prev = c
	}
	return text(b.String())
}

// sub returns a substring of t with a length in [lo, hi), with surrounding
// spaces trimmed; it is never empty when lo ≥ 2. hi must be at most len(t).
func (t text) sub(r *stream, lo, hi int) string {
	n := lo + r.intn(hi-lo)
	off := r.intn(len(t) - n + 1)
	return strings.TrimSpace(string(t[off : off+n]))
}
