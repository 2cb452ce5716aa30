package partition

import "reflect"

// Grouped keeps an epoch's records grouped by slot (key) as they arrive,
// beside a Buffer that numbers the slots. A slot's records fill a list of
// chunks whose sizes double from 4 to 1024 records, cut from blocks of
// 64Ki records that are reused from epoch to epoch: a key's records lie
// in long contiguous runs (a task that folds them reads memory in order),
// nothing is ever copied to grow, and a key seen once costs one chunk of 4.
//
// Record i of a slot is its i-th Add, so a range [lo, hi) of a slot's
// records is a range of its arrivals.
type Grouped[T any] struct {
	blocks [][]T // each blockSize long; blocks[:used] hold this epoch's chunks
	used   int
	fill   int // records used in blocks[used-1]

	// Per chunk: where it starts (block<<blockBits | offset) and the next
	// chunk of its slot (-1 at the end).
	at   []int32
	next []int32

	slots []gslot
	small int // Resets in a row that used far fewer blocks than held
	// plain: T holds no pointers, so Reset need not clear records.
	plain, known bool
}

type gslot struct {
	head, tail int32 // chunks
	fill, size int32 // records in the tail chunk and its capacity
	n          int32
}

const (
	blockBits     = 16
	blockSize     = 1 << blockBits
	firstChunk    = 4
	maxChunk      = 1024
	groupedShrink = 8
)

// Add appends v to the records of slot s. Slots are numbered densely: s
// is at most the number of slots so far (a new slot is the next number).
func (g *Grouped[T]) Add(s int32, v T) {
	if int(s) == len(g.slots) {
		g.slots = append(g.slots, gslot{head: -1, tail: -1})
	}
	sl := &g.slots[s]
	if sl.fill == sl.size {
		size := min(max(2*sl.size, firstChunk), maxChunk)
		c := g.chunk(size)
		if sl.tail < 0 {
			sl.head = c
		} else {
			g.next[sl.tail] = c
		}
		sl.tail, sl.fill, sl.size = c, 0, size
	}
	at := g.at[sl.tail] + sl.fill
	g.blocks[at>>blockBits][at&(blockSize-1)] = v
	sl.fill++
	sl.n++
}

// chunk cuts a chunk of size records and returns its number.
func (g *Grouped[T]) chunk(size int32) int32 {
	if g.used == 0 || g.fill+int(size) > blockSize {
		if g.used == len(g.blocks) {
			g.blocks = append(g.blocks, make([]T, blockSize))
		}
		g.used++
		g.fill = 0
	}
	g.at = append(g.at, int32((g.used-1)<<blockBits+g.fill))
	g.next = append(g.next, -1)
	g.fill += int(size)
	return int32(len(g.at) - 1)
}

// Last returns the last record of slot s, or nil if it has none. The
// pointer is valid until the next Add or Reset.
func (g *Grouped[T]) Last(s int32) *T {
	if int(s) >= len(g.slots) || g.slots[s].n == 0 {
		return nil
	}
	sl := &g.slots[s]
	at := g.at[sl.tail] + sl.fill - 1
	return &g.blocks[at>>blockBits][at&(blockSize-1)]
}

// Len returns the number of records of slot s.
func (g *Grouped[T]) Len(s int32) int {
	if int(s) >= len(g.slots) {
		return 0
	}
	return int(g.slots[s].n)
}

// Range calls f with the records lo..hi-1 of slot s, in arrival order, as
// contiguous runs. The runs are the Grouped's own memory, valid until the
// next Add or Reset.
func (g *Grouped[T]) Range(s int32, lo, hi int, f func(run []T)) {
	if lo >= hi {
		return
	}
	sl := &g.slots[s]
	if hi > int(sl.n) || lo < 0 {
		panic("partition: Grouped.Range out of the slot's records")
	}
	size, pos := firstChunk, 0 // the chunk's capacity and its first record
	for c := sl.head; c >= 0 && pos < hi; c = g.next[c] {
		n := size
		if c == sl.tail {
			n = int(sl.fill)
		}
		if end := pos + n; end > lo {
			a, b := max(lo, pos)-pos, min(hi, end)-pos
			at := int(g.at[c])
			blk := g.blocks[at>>blockBits]
			off := at & (blockSize - 1)
			f(blk[off+a : off+b])
		}
		pos += n
		size = min(2*size, maxChunk)
	}
}

// Reset forgets every slot and record, keeping the blocks for the next
// epoch (dropping those beyond need after several epochs far smaller than
// the peak). Records are cleared so that nothing they point to is kept
// alive.
func (g *Grouped[T]) Reset() {
	if !g.known {
		g.plain, g.known = pointerFree(reflect.TypeFor[T]()), true
	}
	for i := range g.used {
		if g.plain {
			break
		}
		if i == g.used-1 {
			clear(g.blocks[i][:g.fill])
		} else {
			clear(g.blocks[i])
		}
	}
	if len(g.blocks) > 4 && g.used*shrinkRatio < len(g.blocks) {
		g.small++
	} else {
		g.small = 0
	}
	if g.small >= groupedShrink {
		clear(g.blocks[g.used:])
		g.blocks = g.blocks[:g.used]
		g.small = 0
	}
	g.used, g.fill = 0, 0
	g.at, g.next = g.at[:0], g.next[:0]
	g.slots = g.slots[:0]
}

// pointerFree reports whether values of t hold no pointers.
func pointerFree(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return t.Len() == 0 || pointerFree(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !pointerFree(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}
