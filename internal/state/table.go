package state

import (
	"reflect"
	"strings"
	"unsafe"
)

// Table is an open-addressing hash table (linear probing) keyed by K, with
// the 64-bit hash of each key supplied by the caller.
type Table[K comparable, V any] struct {
	slots []slot[K, V]
	mask  uint64
	n     int
	clone func(K) K
}

// CloneKeys makes the table store clone(k) instead of k when it inserts a
// key, so that a key which shares memory with a large buffer (a substring
// of an input chunk, say) does not keep that buffer alive.
func (t *Table[K, V]) CloneKeys(clone func(K) K) { t.clone = clone }

// NewLongTable returns a table for entries that outlive the records they
// came from: string keys are cloned when first stored, since records
// often hold substrings of large input buffers, which the table must not
// pin.
func NewLongTable[K comparable, V any]() *Table[K, V] {
	t := NewTable[K, V](0)
	if reflect.TypeFor[K]().Kind() == reflect.String {
		t.CloneKeys(func(k K) K {
			s := strings.Clone(*(*string)(unsafe.Pointer(&k)))
			return *(*K)(unsafe.Pointer(&s))
		})
	}
	return t
}

type slot[K comparable, V any] struct {
	hash uint64 // 0 marks an empty slot; real hashes of 0 are stored as 1
	key  K
	val  V
}

// NewTable returns a table sized for about hint entries.
func NewTable[K comparable, V any](hint int) *Table[K, V] {
	size := 16
	for size*3/4 < hint {
		size *= 2
	}
	return &Table[K, V]{slots: make([]slot[K, V], size), mask: uint64(size - 1)}
}

// Len is the number of entries.
func (t *Table[K, V]) Len() int { return t.n }

func fix(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}

// Get returns a pointer to the value of key k with hash h, or nil.
func (t *Table[K, V]) Get(h uint64, k K) *V {
	h = fix(h)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.hash == 0 {
			return nil
		}
		if s.hash == h && s.key == k {
			return &s.val
		}
	}
}

// Upsert returns a pointer to the value of key k with hash h, inserting a
// zero value first if k is absent.
func (t *Table[K, V]) Upsert(h uint64, k K) *V { return &t.upsert(h, k).val }

// UpsertKey is Upsert that also returns the key as the table stores it
// (cloned, with CloneKeys), which a caller can keep without pinning what
// k shares memory with.
func (t *Table[K, V]) UpsertKey(h uint64, k K) (*V, K) {
	s := t.upsert(h, k)
	return &s.val, s.key
}

func (t *Table[K, V]) upsert(h uint64, k K) *slot[K, V] {
	h = fix(h)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.hash == h && s.key == k {
			return s
		}
		if s.hash == 0 {
			if (t.n+1)*4 > len(t.slots)*3 {
				t.grow()
				return t.upsert(h, k)
			}
			s.hash = h
			s.key = k
			if t.clone != nil {
				s.key = t.clone(k)
			}
			t.n++
			return s
		}
	}
}

// Delete removes key k with hash h, if present.
func (t *Table[K, V]) Delete(h uint64, k K) {
	h = fix(h)
	i := h & t.mask
	for ; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.hash == 0 {
			return
		}
		if s.hash == h && s.key == k {
			break
		}
	}
	t.removeAt(i)
}

// removeAt deletes slot i with backward-shift deletion, which keeps probe
// sequences intact without tombstones.
func (t *Table[K, V]) removeAt(i uint64) {
	var zero slot[K, V]
	t.slots[i] = zero
	t.n--
	j := i
	for {
		j = (j + 1) & t.mask
		s := t.slots[j]
		if s.hash == 0 {
			return
		}
		home := s.hash & t.mask
		// Move s back to i if its home is not in (i, j] cyclically.
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			t.slots[i] = s
			t.slots[j] = zero
			i = j
		}
	}
}

func (t *Table[K, V]) grow() {
	old := t.slots
	t.slots = make([]slot[K, V], len(old)*2)
	t.mask = uint64(len(t.slots) - 1)
	for _, s := range old {
		if s.hash == 0 {
			continue
		}
		for i := s.hash & t.mask; ; i = (i + 1) & t.mask {
			if t.slots[i].hash == 0 {
				t.slots[i] = s
				break
			}
		}
	}
}

// Range calls f for every entry, with a pointer to its value, until f
// returns false. f must not insert; it may not delete either: use
// DeleteFunc for that.
func (t *Table[K, V]) Range(f func(h uint64, k K, v *V) bool) {
	for i := range t.slots {
		s := &t.slots[i]
		if s.hash != 0 && !f(s.hash, s.key, &s.val) {
			return
		}
	}
}

// DeleteFunc removes every entry for which del returns true.
func (t *Table[K, V]) DeleteFunc(del func(k K, v *V) bool) {
	// Collect first: backward-shift deletion moves entries during a scan.
	type ref struct {
		h uint64
		k K
	}
	var gone []ref
	for i := range t.slots {
		s := &t.slots[i]
		if s.hash != 0 && del(s.key, &s.val) {
			gone = append(gone, ref{s.hash, s.key})
		}
	}
	for _, r := range gone {
		t.Delete(r.h, r.k)
	}
}

// Clear removes every entry. It keeps the table's capacity unless the
// table holds far fewer entries than it has room for, so that a table that
// once grew large does not cost its peak size at every Clear.
func (t *Table[K, V]) Clear() {
	if t.n == 0 {
		return
	}
	if len(t.slots) > 1024 && t.n*16 < len(t.slots) {
		*t = Table[K, V]{slots: make([]slot[K, V], 16), mask: 15, clone: t.clone}
		return
	}
	clear(t.slots)
	t.n = 0
}
