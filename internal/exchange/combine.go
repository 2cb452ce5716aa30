package exchange

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/state"
	"github.com/weirstream/weir/internal/window"
)

// combineEx is the sending side of the key-group exchange into a window
// aggregation whose aggregator can merge: it pre-aggregates the records of
// each epoch locally, per key and window, and at the epoch's end sends one
// partial accumulator per key and window to the owner of the key group,
// which merges it. Network and queue traffic then grows with the distinct
// keys of an epoch rather than with its records.
//
// Lateness is decided by the window operator from the aligned watermark,
// which is at most this sender's own. A record whose window is not past
// cleanup at this sender's watermark is therefore not late downstream
// either, and is combined; any other record is sent as it is, so that the
// window can route it to its late output. When an epoch shows that
// combining does not pay (most keys seen once), the exchange sends raw
// records for a while and then tries again.
//
// The epoch's keys live in dense slices (keys, hashes, sets) indexed
// through a hash table. String keys also go through a small cache indexed
// by the address of the string's bytes: keys that come from a lookup table
// (campaign ids, say) share their bytes, so most records find their entry
// with one comparison, without hashing. Everything is forgotten at the
// epoch's end, so the combiner never keeps input buffers alive.
type combineEx[K comparable, T, A any] struct {
	Raw     *KeyEx[K, T] // sends raw records, and the partials' routing and statistics
	key     func(T) K
	hash    func(K) uint64
	spec    window.Spec
	init    func() A
	add     func(A, T) A
	index   *state.Table[K, int32]
	keys    []K
	hashes  []uint64
	sets    []window.Set[A] // reused across epochs: sets[i].W keeps its capacity
	strKeys bool
	cache   *[cacheSlots]strEntry
	wm      int64
	tc      window.TumblingCache
	cur     []*Pbatch[K, A]
	pool    *sync.Pool
	size    int
	Off     int // epochs left with combining off
	records int // records combined in this epoch
	partial int // partials produced in this epoch
}

const (
	cacheBits  = 10
	cacheSlots = 1 << cacheBits
)

// strEntry caches the entry of a string key by the address and length of
// its bytes. Only the address of the key stored in keys is cached, which
// keeps those bytes alive until the cache is cleared, so a hit is exact.
// Keys must be immutable strings (as Go strings are unless unsafe code
// writes to their bytes).
type strEntry struct {
	p   uintptr
	n   int
	idx int32
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
		index: state.NewTable[K, int32](0),
		wm:    progress.NoWatermark,
		size:  size,
	}
	c.hash = c.Raw.hash // one hasher: it keeps scratch space, and this goroutine is its only user
	if reflect.TypeFor[K]().Kind() == reflect.String {
		c.strKeys = true
		c.cache = new([cacheSlots]strEntry)
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

// Entry returns the epoch's window set of key k. The pointer is valid
// until the next call.
func (c *combineEx[K, T, A]) Entry(k K) *window.Set[A] {
	if !c.strKeys {
		return &c.sets[c.lookup(k)]
	}
	s := *(*string)(unsafe.Pointer(&k))
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	e := &c.cache[(uint64(p)+uint64(len(s)))*0x9e3779b97f4a7c15>>(64-cacheBits)]
	if e.p == p && e.n == len(s) && p != 0 {
		return &c.sets[e.idx]
	}
	idx := c.lookup(k)
	// Cache only the address of the stored key: c.keys holds those bytes
	// alive until the cache is cleared, so a hit is exact. The same content
	// at another address is found by lookup; caching that address could
	// outlive its memory within the epoch.
	if stored := *(*string)(unsafe.Pointer(&c.keys[idx])); unsafe.StringData(stored) == unsafe.StringData(s) {
		*e = strEntry{p: p, n: len(s), idx: idx}
	}
	return &c.sets[idx]
}

// lookup finds or adds k among the epoch's keys.
func (c *combineEx[K, T, A]) lookup(k K) int32 {
	h := c.hash(k)
	n := c.index.Len()
	idx := c.index.Upsert(h, k)
	if c.index.Len() > n {
		*idx = int32(len(c.keys))
		c.keys = append(c.keys, k)
		c.hashes = append(c.hashes, h)
		if len(c.sets) < len(c.keys) {
			c.sets = append(c.sets, window.Set[A]{})
		}
	}
	return *idx
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
		set := c.Entry(c.key(v))
		w := set.Get(start, end, c.init)
		w.Acc = c.add(w.Acc, v)
		return true, nil
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
	set := c.Entry(c.key(v))
	spec.Assign(ts, func(start, end int64) {
		w := set.Get(start, end, c.init)
		w.Acc = c.add(w.Acc, v)
	})
	return true, nil
}

func (c *combineEx[K, T, A]) Mark(m progress.Marker) error {
	e := c.Raw
	for i, k := range c.keys {
		h := c.hashes[i]
		set := &c.sets[i]
		kg := partition.KeyGroupOf(h, e.rt.Groups())
		t := e.rt.Owner(kg)
		if e.keys != nil {
			e.keys.N[kg] += int64(len(set.W)) // each partial is a record to the receiver
		}
		for _, w := range set.W {
			p := c.cur[t]
			p.Recs = append(p.Recs, Partial[K, A]{H: h, K: k, Start: w.Start, End: w.End, Acc: w.Acc})
			c.partial++
			e.countSent(t)
			if len(p.Recs) >= c.size {
				if err := c.Flush(int(t)); err != nil {
					return err
				}
			}
		}
		clear(set.W)
		set.W = set.W[:0]
	}
	// Forget the epoch's keys: they may point into input buffers, which
	// must not be kept alive past the epoch.
	if len(c.keys) > 0 {
		if len(c.sets) > 1024 && len(c.keys)*16 < len(c.sets) {
			c.sets = nil // shrink after a peak
		}
		clear(c.keys)
		c.keys, c.hashes = c.keys[:0], c.hashes[:0]
		c.index.Clear()
		if c.cache != nil {
			clear(c.cache[:])
		}
	}
	for t := range c.cur {
		if err := c.Flush(t); err != nil {
			return err
		}
	}
	switch {
	case c.Off > 0:
		c.Off--
	case c.records > 0 && c.partial*2 > c.records:
		c.Off = 8 // combining saved less than half: send raw for a while
	}
	c.records, c.partial = 0, 0
	c.wm = max(c.wm, m.Watermark)
	return e.Mark(m)
}

func (c *combineEx[K, T, A]) Flush(t int) error {
	p := c.cur[t]
	if len(p.Recs) == 0 {
		return nil
	}
	c.cur[t] = c.pool.Get().(*Pbatch[K, A])
	return c.Raw.sendTo(t, p)
}
