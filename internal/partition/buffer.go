package partition

import "math"

// Buffer is the frequency-aware buffer of one sender for one epoch: it
// gives every distinct key a slot, counts the key's records, chains the
// records of each key in arrival order, and keeps the slots ordered by
// count as records arrive (O(1) per record: slots with equal counts form
// contiguous runs in the order, and a record moves its key to the front
// of its run before the count goes up), so that partitioning at the
// epoch's end needs no sort.
//
// The buffer holds record indices, not records: record i is the i-th Add
// since the last Reset, and the caller keeps the records themselves in a
// slice of its own at the same index.
type Buffer[K comparable] struct {
	// table is an open-addressing hash table (linear probing, power-of-two
	// size) from a key's hash to its slot.
	table []bucket
	shift uint // 64 - log2(len(table))

	keys  []K        // per slot
	slots []slotInfo // per slot

	// Per record, in arrival order.
	slotOf []int32
	next   []int32

	// order lists the slots by non-increasing count. The slots with count
	// c are order[first[c] : first[c]+run[c]]; run[c] == 0 leaves first[c]
	// meaningless.
	order []int32
	first []int32
	run   []int32

	// small counts the Resets in a row that found the buffer far larger
	// than the epoch needed.
	small int

	// countOnly buffers (NewCountBuffer) keep no per-record arrays;
	// unordered ones keep no count order either.
	countOnly bool
	unordered bool
	n         int // records
}

// bucket is one entry of the hash table; slot is the slot plus one, so
// that the zero bucket is empty whatever the hash.
type bucket struct {
	hash uint64
	slot int32
}

type slotInfo struct {
	hash       uint64
	count      int32
	head, tail int32 // first and last record
	pos        int32 // index in order
}

const (
	minBufferTable = 16
	// A Reset drops the buffer's memory when it is over shrinkAbove
	// entries and shrinkAfter epochs in a row used less than 1/shrinkRatio
	// of it (epochs vary in size; regrowing every other epoch costs more
	// than the memory).
	shrinkAbove = 1024
	shrinkRatio = 16
	shrinkAfter = 8
	fibonacci   = 0x9e3779b97f4a7c15
)

// NewBuffer returns an empty buffer.
func NewBuffer[K comparable]() *Buffer[K] {
	b := &Buffer[K]{}
	b.initTable(minBufferTable)
	return b
}

// NewCountBuffer returns an empty buffer that keeps the counts, and the
// count order if ordered, but no per-record chains (SlotOf, Head and Next
// are not available): for callers that group the records themselves, with
// Grouped. Without the order, ByCount returns nil; a caller that merges
// several buffers' counts has no use for each one's order (the order of
// the sums is not a merge of the orders) and saves its upkeep.
func NewCountBuffer[K comparable](ordered bool) *Buffer[K] {
	b := NewBuffer[K]()
	b.countOnly, b.unordered = true, !ordered
	return b
}

func (b *Buffer[K]) initTable(size int) {
	b.table = make([]bucket, size)
	b.shift = 64 - uint(log2(size))
}

func log2(size int) int {
	n := 0
	for 1<<n < size {
		n++
	}
	return n
}

// home is the first bucket probed for hash h: the top bits of a Fibonacci
// multiply, so that hashes that differ only in their high bits spread too.
func (b *Buffer[K]) home(h uint64) int {
	return int((h * fibonacci) >> b.shift)
}

// Add records one record of key k with hash h and returns the key's slot.
// Slots are numbered 0, 1, ... in order of first appearance.
func (b *Buffer[K]) Add(h uint64, k K) int32 {
	if b.n == math.MaxInt32 {
		panic("partition: Buffer holds 2^31-1 records")
	}
	if b.table == nil {
		b.initTable(minBufferTable)
	}
	r := int32(b.n)
	b.n++
	mask := len(b.table) - 1
	i := b.home(h)
	for {
		e := b.table[i]
		if e.slot == 0 {
			break
		}
		if e.hash == h && b.keys[e.slot-1] == k {
			s := e.slot - 1
			if !b.countOnly {
				b.slotOf = append(b.slotOf, s)
				b.next = append(b.next, -1)
				si := &b.slots[s]
				b.next[si.tail] = r
				si.tail = r
			}
			if b.unordered {
				b.slots[s].count++
			} else {
				b.increment(s)
			}
			return s
		}
		i = (i + 1) & mask
	}
	// A new key: i is the empty bucket that ends its probe sequence.
	if (len(b.slots)+1)*4 > len(b.table)*3 {
		b.grow()
		i = b.free(h)
	}
	s := int32(len(b.slots))
	b.table[i] = bucket{hash: h, slot: s + 1}
	b.keys = append(b.keys, k)
	pos := int32(len(b.order))
	b.slots = append(b.slots, slotInfo{hash: h, count: 1, head: r, tail: r, pos: pos})
	if !b.countOnly {
		b.slotOf = append(b.slotOf, s)
		b.next = append(b.next, -1)
	}
	if b.unordered {
		return s
	}
	b.order = append(b.order, s)
	b.ensureRun(1)
	if b.run[1] == 0 {
		b.first[1] = pos
	}
	b.run[1]++
	return s
}

// free returns the first empty bucket on h's probe sequence.
func (b *Buffer[K]) free(h uint64) int {
	mask := len(b.table) - 1
	i := b.home(h)
	for b.table[i].slot != 0 {
		i = (i + 1) & mask
	}
	return i
}

func (b *Buffer[K]) grow() {
	b.initTable(2 * len(b.table))
	for s := range b.slots {
		h := b.slots[s].hash
		b.table[b.free(h)] = bucket{hash: h, slot: int32(s) + 1}
	}
}

// increment raises slot s's count by one, keeping order sorted: s swaps
// with the first slot of its run, which then starts one later, and s ends
// the run of the next count (which, if any, sits just before).
func (b *Buffer[K]) increment(s int32) {
	si := &b.slots[s]
	c := si.count
	f := b.first[c]
	if i := si.pos; i != f {
		o := b.order[f]
		b.order[f], b.order[i] = s, o
		b.slots[o].pos = i
		si.pos = f
	}
	b.first[c]++
	b.run[c]--
	c++
	b.ensureRun(c)
	if b.run[c] == 0 {
		b.first[c] = f
	}
	b.run[c]++
	si.count = c
}

func (b *Buffer[K]) ensureRun(c int32) {
	for int(c) >= len(b.run) {
		b.run = append(b.run, 0)
		b.first = append(b.first, 0)
	}
}

// Len is the number of records added since the last Reset.
func (b *Buffer[K]) Len() int { return b.n }

// Keys is the number of distinct keys (slots).
func (b *Buffer[K]) Keys() int { return len(b.slots) }

// Key returns the key of slot s.
func (b *Buffer[K]) Key(s int32) K { return b.keys[s] }

// Hash returns the hash of slot s's key.
func (b *Buffer[K]) Hash(s int32) uint64 { return b.slots[s].hash }

// Count returns the number of records of slot s.
func (b *Buffer[K]) Count(s int32) int32 { return b.slots[s].count }

// SlotOf returns the slot of record r (not for a NewCountBuffer).
func (b *Buffer[K]) SlotOf(r int32) int32 { return b.slotOf[r] }

// Head returns the first record of slot s, in arrival order (not for a
// NewCountBuffer).
func (b *Buffer[K]) Head(s int32) int32 { return b.slots[s].head }

// Next returns the record after r with the same key, or -1.
func (b *Buffer[K]) Next(r int32) int32 { return b.next[r] }

// ByCount returns the slots in non-increasing order of count. The slice is
// the buffer's own; it is valid until the next Add or Reset.
func (b *Buffer[K]) ByCount() []int32 {
	if b.unordered {
		return nil
	}
	return b.order
}

// Reset empties the buffer, keeping its memory (shrinking it after a peak
// far above the current use, as state.Table.Clear does). Keys are
// cleared so that the buffer does not keep what they point to alive.
func (b *Buffer[K]) Reset() {
	nk, nr := len(b.slots), b.n
	b.n = 0
	clear(b.keys)
	bigTable := len(b.table) > shrinkAbove && nk*shrinkRatio < len(b.table)
	bigRecs := cap(b.slotOf) > shrinkAbove && nr*shrinkRatio < cap(b.slotOf)
	// The runs are indexed by count, so they are no longer than the
	// largest count, itself at most the number of records.
	bigRuns := cap(b.run) > shrinkAbove && nr*shrinkRatio < cap(b.run)
	if bigTable || bigRecs || bigRuns {
		b.small++
	} else {
		b.small = 0
	}
	shrink := b.small >= shrinkAfter
	if shrink {
		b.small = 0
	}
	if shrink && bigTable {
		b.initTable(minBufferTable)
		b.keys, b.slots, b.order = nil, nil, nil
	} else {
		clear(b.table)
		b.keys, b.slots, b.order = b.keys[:0], b.slots[:0], b.order[:0]
	}
	if shrink && bigRecs {
		b.slotOf, b.next = nil, nil
	} else {
		b.slotOf, b.next = b.slotOf[:0], b.next[:0]
	}
	if shrink && bigRuns {
		b.run, b.first = nil, nil
	} else {
		clear(b.run)
		b.run, b.first = b.run[:0], b.first[:0]
	}
}
