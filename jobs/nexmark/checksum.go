package nexmark

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/weirstream/weir/internal/partition"
)

// Checksum is an order-independent digest of a query's final result: the
// number of final rows and a wrapping sum of a 64-bit hash of each final
// row. For an updating query (q4) the final rows are the last row per key.
// Two runs have the same final result iff (with overwhelming probability)
// their checksums are Equal.
//
// A row's hash is computed from its typed columns (integers, strings, the
// exact decimal of q1's price, the float of q4's average), the same from a
// row in the engine as from its CSV line parsed back (ChecksumOf); it does
// not depend on the process, so checksums compare across runs.
type Checksum struct {
	Rows int64
	Sum  uint64
	// last is the hash of each key's last row, for updating queries.
	last map[int64]uint64
}

// Equal reports whether c and o digest the same final result.
func (c *Checksum) Equal(o *Checksum) bool { return c.Rows == o.Rows && c.Sum == o.Sum }

// String returns the checksum as "ROWS rows, sum HEX".
func (c *Checksum) String() string { return fmt.Sprintf("%d rows, sum %016x", c.Rows, c.Sum) }

// add counts a row with hash h.
func (c *Checksum) add(h uint64) { c.Rows++; c.Sum += h }

// update makes h the hash of key's row, replacing the one before.
func (c *Checksum) update(key int64, h uint64) {
	if c.last == nil {
		c.last = map[int64]uint64{}
	}
	if old, ok := c.last[key]; ok {
		c.Sum -= old
	} else {
		c.Rows++
	}
	c.last[key] = h
	c.Sum += h
}

// hashed is a result row as the checksum sink sees it: its hash and, for
// an updating query, its key.
type hashed struct {
	Key int64
	H   uint64
}

// sumSink folds hashed rows into a Checksum. It runs as one instance and
// is saved in checkpoints, so its sum is exactly-once.
type sumSink struct {
	mu       sync.Mutex
	c        *Checksum
	updating bool
}

func (s *sumSink) Write(batch []hashed) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range batch {
		if s.updating {
			s.c.update(r.Key, r.H)
		} else {
			s.c.add(r.H)
		}
	}
	return nil
}

func (s *sumSink) Close() error { return nil }

// Snapshot implements weir.Checkpointed.
func (s *sumSink) Snapshot() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := binary.AppendVarint(nil, s.c.Rows)
	b = binary.AppendUvarint(b, s.c.Sum)
	keys := make([]int64, 0, len(s.c.last))
	for k := range s.c.last {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = binary.AppendVarint(b, k)
		b = binary.AppendUvarint(b, s.c.last[k])
	}
	return b, nil
}

// Restore implements weir.Checkpointed.
func (s *sumSink) Restore(data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var c Checksum
	var n int
	next := func() uint64 {
		if n < 0 {
			return 0
		}
		v, k := binary.Uvarint(data)
		if k <= 0 {
			n = -1
			return 0
		}
		data = data[k:]
		return v
	}
	sv := func() int64 { u := next(); return int64(u>>1) ^ -int64(u&1) }
	c.Rows, c.Sum = sv(), next()
	for n >= 0 && len(data) > 0 {
		k := sv()
		h := next()
		if c.last == nil {
			c.last = map[int64]uint64{}
		}
		c.last[k] = h
	}
	if n < 0 {
		return fmt.Errorf("nexmark: checksum sink: corrupt snapshot")
	}
	*s.c = c
	return nil
}

// hasher accumulates a row's hash, column by column.
type hasher uint64

func newHasher() hasher { return 0x589965cc75374cc3 }

func (h hasher) int(v int64) hasher {
	return hasher(partition.HashUint64(uint64(h)*0xa0761d6478bd642f ^ uint64(v)))
}

func (h hasher) float(v float64) hasher { return h.int(int64(math.Float64bits(v))) }

func (h hasher) str(s string) hasher { return h.int(int64(partition.HashString(s))) }

// sum is the row's hash.
func (h hasher) sum() uint64 { return partition.HashUint64(uint64(h) ^ 0x8ebc6af09c88c6e3) }
