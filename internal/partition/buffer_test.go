package partition

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// bufferModel is the naive model of a Buffer: a map and slices.
type bufferModel struct {
	slot    map[string]int32
	keys    []string
	records [][]int32 // per slot, in arrival order
}

func newBufferModel() *bufferModel { return &bufferModel{slot: map[string]int32{}} }

func (m *bufferModel) add(r int32, k string) int32 {
	s, ok := m.slot[k]
	if !ok {
		s = int32(len(m.keys))
		m.slot[k] = s
		m.keys = append(m.keys, k)
		m.records = append(m.records, nil)
	}
	m.records[s] = append(m.records[s], r)
	return s
}

// keyStream draws n keys from a universe of size keys with Zipf-like skew
// s (0 for uniform).
func keyStream(rng *rand.Rand, n, keys int, s float64) []string {
	w := zipfWeights(keys, s)
	cum := make([]float64, keys)
	var sum float64
	for i, x := range w {
		sum += x
		cum[i] = sum
	}
	out := make([]string, n)
	for i := range out {
		x := rng.Float64() * sum
		lo, hi := 0, keys-1
		for lo < hi {
			mid := (lo + hi) / 2
			if cum[mid] < x {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		out[i] = fmt.Sprintf("k%d", lo)
	}
	return out
}

// weakHash collides often, to exercise probing and key comparison.
func weakHash(k string) uint64 { return HashString(k) & 0xff }

func checkBuffer(t *testing.T, b *Buffer[string], m *bufferModel) {
	t.Helper()
	if b.Keys() != len(m.keys) {
		t.Fatalf("Keys() = %d; want %d", b.Keys(), len(m.keys))
	}
	total := 0
	for s, k := range m.keys {
		s := int32(s)
		if got := b.Key(s); got != k {
			t.Fatalf("Key(%d) = %q; want %q", s, got, k)
		}
		if got := b.Count(s); int(got) != len(m.records[s]) {
			t.Fatalf("Count(%d) = %d; want %d", s, got, len(m.records[s]))
		}
		i := 0
		for r := b.Head(s); r >= 0; r = b.Next(r) {
			if i >= len(m.records[s]) || r != m.records[s][i] {
				t.Fatalf("slot %d: chain has record %d at %d; want %v", s, r, i, m.records[s])
			}
			if b.SlotOf(r) != s {
				t.Fatalf("SlotOf(%d) = %d; want %d", r, b.SlotOf(r), s)
			}
			i++
		}
		if i != len(m.records[s]) {
			t.Fatalf("slot %d: chain has %d records; want %d", s, i, len(m.records[s]))
		}
		total += i
	}
	if b.Len() != total {
		t.Fatalf("Len() = %d; want %d", b.Len(), total)
	}
	checkByCount(t, b)
}

func checkByCount(t *testing.T, b *Buffer[string]) {
	t.Helper()
	order := b.ByCount()
	if len(order) != b.Keys() {
		t.Fatalf("len(ByCount()) = %d; want %d", len(order), b.Keys())
	}
	seen := make([]bool, b.Keys())
	for i, s := range order {
		if seen[s] {
			t.Fatalf("ByCount() lists slot %d twice", s)
		}
		seen[s] = true
		if i > 0 && b.Count(order[i-1]) < b.Count(s) {
			t.Fatalf("ByCount()[%d] has count %d after count %d", i, b.Count(s), b.Count(order[i-1]))
		}
	}
}

func TestBufferAgainstModel(t *testing.T) {
	for _, tc := range []struct {
		records, keys int
		skew          float64
		hash          func(string) uint64
	}{
		{0, 1, 0, HashString},
		{1, 1, 0, HashString},
		{1000, 1, 0, HashString},
		{5000, 100, 0, HashString},
		{5000, 100, 1.2, HashString},
		{20000, 5000, 0.8, HashString},
		{20000, 20000, 0, HashString},
		{20000, 3000, 1.0, weakHash},
		{20000, 3000, 0, func(string) uint64 { return 0 }},
	} {
		rng := rand.New(rand.NewPCG(uint64(tc.records), uint64(tc.keys)))
		b := NewBuffer[string]()
		// Three epochs through the same buffer: reuse must not change
		// the answers.
		for epoch := range 3 {
			stream := keyStream(rng, tc.records, tc.keys, tc.skew)
			m := newBufferModel()
			for i, k := range stream {
				want := m.add(int32(i), k)
				if got := b.Add(tc.hash(k), k); got != want {
					t.Fatalf("records=%d keys=%d epoch %d: Add(%q) = %d; want %d", tc.records, tc.keys, epoch, k, got, want)
				}
				if rng.IntN(500) == 0 {
					checkByCount(t, b)
				}
			}
			checkBuffer(t, b, m)
			for s, k := range m.keys {
				if got, want := b.Hash(int32(s)), tc.hash(k); got != want {
					t.Fatalf("Hash(%d) = %x; want %x", s, got, want)
				}
			}
			b.Reset()
			if b.Len() != 0 || b.Keys() != 0 || len(b.ByCount()) != 0 {
				t.Fatalf("after Reset: Len %d, Keys %d, ByCount %d; want 0", b.Len(), b.Keys(), len(b.ByCount()))
			}
		}
	}
}

// TestBufferByCountEveryAdd checks the order after every record.
func TestBufferByCountEveryAdd(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		keys := 1 + rng.IntN(60)
		stream := keyStream(rng, 400, keys, rng.Float64()*2)
		b := NewBuffer[string]()
		m := newBufferModel()
		for i, k := range stream {
			m.add(int32(i), k)
			b.Add(HashString(k), k)
			checkByCount(t, b)
		}
		checkBuffer(t, b, m)
	}
}

func TestBufferZeroValue(t *testing.T) {
	var b Buffer[int]
	for i := range 100 {
		if s := b.Add(HashUint64(uint64(i%7)), i%7); i < 7 && s != int32(i) {
			t.Fatalf("Add #%d = %d", i, s)
		}
	}
	if b.Keys() != 7 || b.Len() != 100 {
		t.Fatalf("Keys, Len = %d, %d; want 7, 100", b.Keys(), b.Len())
	}
	b.Reset()
	b.Add(1, 1)
	if b.Keys() != 1 || b.Count(0) != 1 {
		t.Fatalf("after Reset: Keys %d Count %d; want 1 1", b.Keys(), b.Count(0))
	}
}

func TestBufferResetClearsKeys(t *testing.T) {
	b := NewBuffer[*int]()
	for i := range 10 {
		v := i
		b.Add(HashUint64(uint64(i)), &v)
	}
	b.Reset()
	for i, k := range b.keys[:cap(b.keys)] {
		if k != nil {
			t.Fatalf("key %d still referenced after Reset", i)
		}
	}
}

func TestBufferShrinksAfterPeak(t *testing.T) {
	b := NewBuffer[int]()
	for i := range 100000 {
		b.Add(HashUint64(uint64(i)), i)
	}
	b.Reset()
	big := len(b.table)
	if big < 100000 {
		t.Fatalf("table of %d buckets for 100000 keys", big)
	}
	// An epoch as big keeps the memory.
	for i := range 100000 {
		b.Add(HashUint64(uint64(i)), i)
	}
	b.Reset()
	if len(b.table) != big {
		t.Fatalf("table shrank to %d after an epoch as large as its peak", len(b.table))
	}
	// One small epoch after the peak keeps it (epochs vary in size);
	// shrinkAfter of them in a row drop it.
	for e := range shrinkAfter {
		for i := range 10 {
			b.Add(HashUint64(uint64(i)), i)
		}
		b.Reset()
		if e < shrinkAfter-1 && len(b.table) != big {
			t.Fatalf("table shrank after %d small epochs; want %d", e+1, shrinkAfter)
		}
	}
	if len(b.table) > shrinkAbove || cap(b.slotOf) > shrinkAbove || cap(b.keys) > shrinkAbove {
		t.Fatalf("after a small epoch: table %d, records %d, keys %d; want them dropped",
			len(b.table), cap(b.slotOf), cap(b.keys))
	}
	m := newBufferModel()
	stream := keyStream(rand.New(rand.NewPCG(1, 2)), 3000, 300, 1)
	for i, k := range stream {
		m.add(int32(i), k)
	}
	sb := NewBuffer[string]()
	for _, k := range stream {
		sb.Add(HashString(k), k)
	}
	checkBuffer(t, sb, m)
}

func TestBufferAddDoesNotAllocate(t *testing.T) {
	stream := keyStream(rand.New(rand.NewPCG(3, 4)), 50000, 5000, 1.0)
	hashes := make([]uint64, len(stream))
	for i, k := range stream {
		hashes[i] = HashString(k)
	}
	b := NewBuffer[string]()
	epoch := func() {
		for i, k := range stream {
			b.Add(hashes[i], k)
		}
		b.Reset()
	}
	epoch() // warm up
	if allocs := testing.AllocsPerRun(5, epoch); allocs != 0 {
		t.Errorf("an epoch of %d Adds allocates %.1f times after warm-up; want 0", len(stream), allocs)
	}
}

func BenchmarkBufferAdd(b *testing.B) {
	stream := keyStream(rand.New(rand.NewPCG(5, 6)), 1<<20, 100000, 1.0)
	hashes := make([]uint64, len(stream))
	for i, k := range stream {
		hashes[i] = HashString(k)
	}
	buf := NewBuffer[string]()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if i == len(stream) {
			buf.Reset()
			i = 0
		}
		buf.Add(hashes[i], stream[i])
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
