package exchange

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/window"
)

// combineEx is the sending side of the key-group exchange into a window
// aggregation whose aggregator can merge: it pre-aggregates the records of
// each epoch locally, per key and window, and sends partial accumulators to
// the owners of the key groups, which merge them. Network and queue traffic
// then grows with the key windows that recur within an epoch rather than
// with the records.
//
// The partials live in a fixed table of slots, one key window per slot,
// small enough to stay in the core's cache; a key window has two places
// (a two-way set). A record whose key window holds one of them is added
// there; otherwise the older partial of the pair is sent on (evicted) and
// the record's key window takes its place. Frequent keys keep their slots
// and are combined; rare ones pass through as one-record partials, for
// about the cost of a raw record; and the work per record never reaches
// into a table of every key of the epoch. At the
// epoch's end every slot is sent and cleared, so the combiner never keeps
// input buffers alive.
//
// Lateness is decided by the window operator from the aligned watermark,
// which is at most this sender's own. A record whose window is not past
// cleanup at this sender's watermark is therefore not late downstream
// either, and is combined; any other record is sent as it is, so that the
// window can route it to its late output.
//
// With Adapt (partitioning auto), the exchange chooses per epoch between
// combining and raw records: an epoch whose partials exceed a set share of
// the records it combined shows that combining does not pay (most key
// windows do not recur while they hold their slot), and the exchange sends
// raw records, as hash partitioning does, for a while and then tries again.
//
// String keys go through a small memo of their hashes indexed by the
// address of the string's bytes: keys that come from a lookup table
// (campaign ids, say) share their bytes, so most records find their hash
// with one comparison. A memo entry holds its string, so an address that
// hits is that string's.
type combineEx[K comparable, T, A any] struct {
	Raw     *KeyEx[K, T] // sends raw records, and the partials' routing and statistics
	key     func(T) K
	hash    func(K) uint64
	spec    window.Spec
	init    func() A
	add     func(A, T) A
	slots   []cslot[K, A]
	used    int // slots in use
	strKeys bool
	memo    *[memoSlots]strMemo[K]
	wm      int64
	tc      window.TumblingCache
	cur     []*Pbatch[K, A]
	pool    *sync.Pool
	size    int
	Adapt   bool // choose per epoch between combining and raw records
	Off     int  // epochs left with combining off
	records int  // records combined in this epoch
	partial int  // partials produced in this epoch
}

// cslot holds the partial of one key window.
type cslot[K comparable, A any] struct {
	h          uint64
	k          K
	start, end int64
	acc        A
	used       bool
}

const (
	// slotBits sizes the slot table: 8192 slots (4096 pairs) of a few
	// dozen bytes stay in a core's L2 cache.
	slotBits  = 13
	memoBits  = 10
	memoSlots = 1 << memoBits
	// rawShare: under Adapt, an epoch whose partials exceed this share of
	// its combined records turns combining off for offEpochs epochs.
	rawShare  = 0.8
	offEpochs = 8
)

// strMemo is the hash of one string key, held by the memo.
type strMemo[K comparable] struct {
	k K
	h uint64
}

// Partial is a pre-aggregated window of one key.
type Partial[K comparable, A any] struct {
	H          uint64
	K          K
	Start, End int64
	Acc        A
}

type Pbatch[K comparable, A any] struct {
	Recs []Partial[K, A]
	pool *sync.Pool
}

// Len is the number of partials in the batch.
func (b *Pbatch[K, A]) Len() int { return len(b.Recs) }

func (b *Pbatch[K, A]) Release() {
	clear(b.Recs)
	b.Recs = b.Recs[:0]
	b.pool.Put(b)
}

func NewCombineEx[K comparable, T, A any](key func(T) K, rt *partition.Table, outlets []runtime.Outlet, size int,
	spec window.Spec, init func() A, add func(A, T) A, dist bool) *combineEx[K, T, A] {
	c := &combineEx[K, T, A]{
		Raw:   NewKeyEx(key, rt, outlets, size, dist),
		key:   key,
		spec:  spec,
		init:  init,
		add:   add,
		slots: make([]cslot[K, A], 1<<slotBits),
		wm:    progress.NoWatermark,
		size:  size,
	}
	c.hash = c.Raw.hash // one hasher: it keeps scratch space, and this goroutine is its only user
	if reflect.TypeFor[K]().Kind() == reflect.String {
		c.strKeys = true
		c.memo = new([memoSlots]strMemo[K])
	}
	c.pool = &sync.Pool{New: func() any {
		return &Pbatch[K, A]{Recs: make([]Partial[K, A], 0, size), pool: c.pool}
	}}
	c.cur = make([]*Pbatch[K, A], len(outlets))
	for i := range c.cur {
		c.cur[i] = c.pool.Get().(*Pbatch[K, A])
	}
	return c
}

func (c *combineEx[K, T, A]) Push(b *dataflow.Batch[T]) error {
	if c.Off > 0 {
		return c.Raw.Push(b)
	}
	// Count locally: a field written per record would bounce its cache
	// line between the cores of neighbouring exchanges.
	n := 0
	if b.Sel != nil {
		for _, i := range b.Sel {
			ok, err := c.One(b, int(i))
			if err != nil {
				return err
			}
			if ok {
				n++
			}
		}
	} else {
		for i := range b.V {
			ok, err := c.One(b, i)
			if err != nil {
				return err
			}
			if ok {
				n++
			}
		}
	}
	c.records += n
	c.Raw.received(b.Len())
	return nil
}

// hashOf returns the hash of k, through the memo for string keys.
func (c *combineEx[K, T, A]) hashOf(k K) uint64 {
	if !c.strKeys {
		return c.hash(k)
	}
	s := *(*string)(unsafe.Pointer(&k))
	p := unsafe.StringData(s)
	e := &c.memo[(uint64(uintptr(unsafe.Pointer(p)))+uint64(len(s)))*0x9e3779b97f4a7c15>>(64-memoBits)]
	if m := *(*string)(unsafe.Pointer(&e.k)); unsafe.StringData(m) == p && len(m) == len(s) && p != nil {
		return e.h
	}
	e.k, e.h = k, c.hash(k)
	return e.h
}

// fold adds v to the partial of key k (hash h) in window [start, end).
// The slots are in pairs (two-way sets): a key window is looked for in
// both slots of its pair, the one found last is kept first, and a new one
// takes the first slot, moving its partial to the second and sending on
// the partial that held the second. Two frequent key windows whose slots
// coincide then keep theirs rather than evicting each other at every
// record.
func (c *combineEx[K, T, A]) fold(h uint64, k K, start, end int64, v T) error {
	i := (h + uint64(start)*0x9e3779b97f4a7c15) * 0xff51afd7ed558ccd >> (64 - slotBits) &^ 1
	s0, s1 := &c.slots[i], &c.slots[i+1]
	// An unused slot is zero, and no window has start == end == 0, so
	// the comparison of the bounds also passes over unused slots.
	if s0.h == h && s0.start == start && s0.end == end && c.same(s0.k, k) {
		s0.acc = c.add(s0.acc, v)
		return nil
	}
	if s1.h == h && s1.start == start && s1.end == end && c.same(s1.k, k) {
		s1.acc = c.add(s1.acc, v)
		*s0, *s1 = *s1, *s0
		return nil
	}
	switch {
	case !s0.used:
	case !s1.used:
		*s1 = *s0
	default:
		if err := c.evict(s1); err != nil {
			return err
		}
		*s1 = *s0
		c.used--
	}
	c.used++
	var a A
	if c.init != nil {
		a = c.init()
	}
	*s0 = cslot[K, A]{h: h, k: k, start: start, end: end, acc: c.add(a, v), used: true}
	return nil
}

// same reports whether keys a and b are equal, for strings first by the
// address of their bytes (keys from a lookup table share them).
func (c *combineEx[K, T, A]) same(a, b K) bool {
	if c.strKeys {
		x, y := *(*string)(unsafe.Pointer(&a)), *(*string)(unsafe.Pointer(&b))
		if len(x) == len(y) && unsafe.StringData(x) == unsafe.StringData(y) {
			return true
		}
	}
	return a == b
}

// evict appends the partial of slot s to its owner's batch.
func (c *combineEx[K, T, A]) evict(s *cslot[K, A]) error {
	e := c.Raw
	kg := partition.KeyGroupOf(s.h, e.rt.Groups())
	t := e.rt.Owner(kg)
	if e.keys != nil {
		e.keys.N[kg]++ // each partial is a record to the receiver
	}
	p := c.cur[t]
	p.Recs = append(p.Recs, Partial[K, A]{H: s.h, K: s.k, Start: s.start, End: s.end, Acc: s.acc})
	c.partial++
	e.countSent(t)
	if len(p.Recs) >= c.size {
		return c.Flush(int(t))
	}
	return nil
}

// One combines record i of b, or sends it raw; it reports whether it
// combined.
func (c *combineEx[K, T, A]) One(b *dataflow.Batch[T], i int) (bool, error) {
	var ts int64
	if b.Ts != nil {
		ts = b.Ts[i]
	}
	spec := &c.spec
	if spec.Kind == window.Tumbling {
		start, end, ok := c.tc.Window(ts, spec.Size)
		if !ok {
			panic(dataflow.BadWindowTime(ts, *spec))
		}
		if spec.Late(end, c.wm) {
			return false, c.Raw.One(b, i)
		}
		v := b.V[i]
		k := c.key(v)
		return true, c.fold(c.hashOf(k), k, start, end, v)
	}
	late := false
	spec.Assign(ts, func(_, end int64) {
		if spec.Late(end, c.wm) {
			late = true
		}
	})
	if late {
		return false, c.Raw.One(b, i)
	}
	v := b.V[i]
	k := c.key(v)
	h := c.hashOf(k)
	var err error
	spec.Assign(ts, func(start, end int64) {
		if err == nil {
			err = c.fold(h, k, start, end, v)
		}
	})
	return true, err
}

func (c *combineEx[K, T, A]) Mark(m progress.Marker) error {
	// Send every partial and forget the epoch's keys: they may point into
	// input buffers, which must not be kept alive past the epoch.
	for i := range c.slots {
		if c.used == 0 {
			break
		}
		if s := &c.slots[i]; s.used {
			if err := c.evict(s); err != nil {
				return err
			}
			*s = cslot[K, A]{}
			c.used--
		}
	}
	if c.memo != nil {
		clear(c.memo[:])
	}
	for t := range c.cur {
		if err := c.Flush(t); err != nil {
			return err
		}
	}
	switch {
	case c.Off > 0:
		c.Off--
	case c.Adapt && c.records > 0 && float64(c.partial) > rawShare*float64(c.records):
		c.Off = offEpochs // combining does not pay: send raw for a while
	}
	c.records, c.partial = 0, 0
	c.wm = max(c.wm, m.Watermark)
	return c.Raw.Mark(m)
}

func (c *combineEx[K, T, A]) Flush(t int) error {
	p := c.cur[t]
	if len(p.Recs) == 0 {
		return nil
	}
	c.cur[t] = c.pool.Get().(*Pbatch[K, A])
	return c.Raw.sendTo(t, p)
}
