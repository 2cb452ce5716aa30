package exchange

import (
	"github.com/weirstream/weir/internal/codec"
	"github.com/weirstream/weir/internal/partition"
)

// KeyHasher hashes keys for routing by key group and for state tables. In
// a job of several processes every process must hash a key alike: keys
// that partition.Hasher hashes deterministically (strings, integers,
// bools) keep that hash; others (structs, arrays, floats) are hashed by
// their codec encoding, which is the same everywhere. (Floats +0 and -0
// are equal keys with different encodings: avoid them as distributed
// keys.) The returned function keeps scratch space: one goroutine uses it.
func KeyHasher[K comparable](dist bool) func(K) uint64 {
	h, deterministic := partition.Hasher[K]()
	if deterministic || !dist {
		return h
	}
	c, err := codec.For[K]()
	if err != nil {
		return h // the key cannot cross processes; the edge's codec reports it
	}
	var one [1]K
	var buf []byte
	return func(k K) uint64 {
		one[0] = k
		buf = c.Append(buf[:0], one[:])
		return partition.HashBytes(buf)
	}
}
