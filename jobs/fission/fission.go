package fission

import (
	"sync"

	"github.com/weirstream/weir"
)

// Record is an input event.
type Record struct {
	ID     uint64
	User   uint32
	Amount int64
}

// Scored is a record with its score and, in the keyed shape, the user's
// running total of scored amounts.
type Scored struct {
	ID    uint64
	User  uint32
	Score uint64
	Total int64
}

// Config shapes the pipeline.
type Config struct {
	// Rounds of mixing the score map does per record (its CPU cost).
	Rounds int
	// Keyed adds the running total per user.
	Keyed bool
}

// Generate makes n records over users users, deterministically.
func Generate(n, users int) []Record {
	recs := make([]Record, n)
	x := uint64(0x9E3779B97F4A7C15)
	for i := range recs {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		recs[i] = Record{ID: uint64(i), User: uint32(x % uint64(max(1, users))), Amount: int64(x>>40) % 1000}
	}
	return recs
}

// Score mixes a record's fields rounds times: the CPU-heavy step.
func Score(r Record, rounds int) Scored {
	x := r.ID*0x9E3779B97F4A7C15 ^ uint64(r.User)
	for range rounds {
		x = x*0xBF58476D1CE4E5B9 + 0x94D049BB133111EB
		x ^= x >> 31
	}
	return Scored{ID: r.ID, User: r.User, Score: x, Total: r.Amount}
}

// Keep is the filter: about three records in four pass.
func Keep(s Scored) bool { return s.Score%4 != 0 }

// Query is the pipeline over records.
func Query(recs weir.Stream[Record], c Config) weir.Stream[Scored] {
	rounds := c.Rounds
	scored := weir.Map(recs, func(r Record) Scored { return Score(r, rounds) }, weir.Name("score"), weir.Stateless())
	kept := weir.Filter(scored, Keep, weir.Name("keep"), weir.Stateless())
	if !c.Keyed {
		return kept
	}
	byUser := weir.KeyBy(kept, func(s Scored) uint32 { return s.User }, weir.Name("user"))
	return weir.Process(byUser, func(_ uint32, total *int64, s Scored, out []Scored) []Scored {
		*total += s.Total
		s.Total = *total
		return append(out, s)
	}, weir.Name("total"), weir.Selectivity(weir.ExactlyOne))
}

// Reference is the pipeline as a plain loop, folded into a Checksum.
func Reference(recs []Record, c Config) *Checksum {
	sum := &Checksum{}
	totals := map[uint32]int64{}
	out := make([]Scored, 0, 1024)
	for _, r := range recs {
		s := Score(r, c.Rounds)
		if !Keep(s) {
			continue
		}
		if c.Keyed {
			totals[s.User] += s.Total
			s.Total = totals[s.User]
		}
		out = append(out, s)
		if len(out) == cap(out) {
			sum.Write(out)
			out = out[:0]
		}
	}
	sum.Write(out)
	return sum
}

// Checksum is an output that keeps only digests of what it received: an
// order-sensitive one (Ordered) and one that ignores order (Unordered).
type Checksum struct {
	mu        sync.Mutex
	Records   int64
	Ordered   uint64
	Unordered uint64
}

func digest(s Scored) uint64 {
	x := s.ID*0x9E3779B97F4A7C15 ^ s.Score ^ uint64(s.Total)<<17 ^ uint64(s.User)
	x ^= x >> 33
	x *= 0xFF51AFD7ED558CCD
	return x ^ x>>33
}

// Write implements weir.Output.
func (c *Checksum) Write(batch []Scored) error {
	c.mu.Lock()
	for _, s := range batch {
		d := digest(s)
		c.Ordered = c.Ordered*0x100000001B3 ^ d
		c.Unordered += d
	}
	c.Records += int64(len(batch))
	c.mu.Unlock()
	return nil
}

// Close implements weir.Output.
func (c *Checksum) Close() error { return nil }
