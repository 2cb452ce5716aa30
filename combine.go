package weir

import (
	"sync"

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
type combineEx[K comparable, T, A any] struct {
	raw     *keyEx[K, T]
	spec    window.Spec
	init    func() A
	add     func(A, T) A
	parts   *state.Table[K, window.Set[A]]
	wm      int64
	tc      window.TumblingCache
	cur     []*pbatch[K, A]
	pool    *sync.Pool
	size    int
	off     int // epochs left with combining off
	records int // records combined in this epoch
	partial int // partials produced in this epoch
}

// partial is a pre-aggregated window of one key.
type partial[K comparable, A any] struct {
	h          uint64
	k          K
	start, end int64
	acc        A
}

type pbatch[K comparable, A any] struct {
	recs []partial[K, A]
	pool *sync.Pool
}

func (b *pbatch[K, A]) release() {
	clear(b.recs)
	b.recs = b.recs[:0]
	b.pool.Put(b)
}

func newCombineEx[K comparable, T, A any](key func(T) K, groups int, outlets []runtime.Outlet, size int,
	spec window.Spec, init func() A, add func(A, T) A) *combineEx[K, T, A] {
	c := &combineEx[K, T, A]{
		raw:   newKeyEx(key, groups, outlets, size),
		spec:  spec,
		init:  init,
		add:   add,
		parts: state.NewTable[K, window.Set[A]](0),
		wm:    progress.NoWatermark,
		size:  size,
	}
	c.pool = &sync.Pool{New: func() any {
		return &pbatch[K, A]{recs: make([]partial[K, A], 0, size), pool: c.pool}
	}}
	c.cur = make([]*pbatch[K, A], len(outlets))
	for i := range c.cur {
		c.cur[i] = c.pool.Get().(*pbatch[K, A])
	}
	return c
}

func (c *combineEx[K, T, A]) push(b *batch[T]) error {
	if c.off > 0 {
		return c.raw.push(b)
	}
	// Count locally: a field written per record would bounce its cache
	// line between the cores of neighbouring exchanges.
	n := 0
	if b.sel != nil {
		for _, i := range b.sel {
			ok, err := c.one(b, int(i))
			if err != nil {
				return err
			}
			if ok {
				n++
			}
		}
	} else {
		for i := range b.v {
			ok, err := c.one(b, i)
			if err != nil {
				return err
			}
			if ok {
				n++
			}
		}
	}
	c.records += n
	return nil
}

// one combines record i of b, or sends it raw; it reports whether it
// combined.
func (c *combineEx[K, T, A]) one(b *batch[T], i int) (bool, error) {
	var ts int64
	if b.ts != nil {
		ts = b.ts[i]
	}
	spec := &c.spec
	if spec.Kind == window.Tumbling {
		start, end := c.tc.Window(ts, spec.Size)
		if spec.Late(end, c.wm) {
			return false, c.raw.one(b, i)
		}
		v := b.v[i]
		k := c.raw.key(v)
		set := c.parts.Upsert(c.raw.hash(k), k)
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
		return false, c.raw.one(b, i)
	}
	v := b.v[i]
	k := c.raw.key(v)
	set := c.parts.Upsert(c.raw.hash(k), k)
	spec.Assign(ts, func(start, end int64) {
		w := set.Get(start, end, c.init)
		w.Acc = c.add(w.Acc, v)
	})
	return true, nil
}

func (c *combineEx[K, T, A]) mark(m progress.Marker) error {
	e := c.raw
	var err error
	c.parts.Range(func(h uint64, k K, set *window.Set[A]) bool {
		for _, w := range set.W {
			t := e.owner[partition.KeyGroupOf(h, e.groups)]
			p := c.cur[t]
			p.recs = append(p.recs, partial[K, A]{h: h, k: k, start: w.Start, end: w.End, acc: w.Acc})
			c.partial++
			if len(p.recs) >= c.size {
				if err = c.flush(int(t)); err != nil {
					return false
				}
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	// Forget the epoch's keys: they may point into input buffers, which
	// must not be kept alive past the epoch.
	c.parts.Clear()
	for t := range c.cur {
		if err := c.flush(t); err != nil {
			return err
		}
	}
	switch {
	case c.off > 0:
		c.off--
	case c.records > 0 && c.partial*2 > c.records:
		c.off = 8 // combining saved less than half: send raw for a while
	}
	c.records, c.partial = 0, 0
	c.wm = max(c.wm, m.Watermark)
	return e.mark(m)
}

func (c *combineEx[K, T, A]) flush(t int) error {
	p := c.cur[t]
	if len(p.recs) == 0 {
		return nil
	}
	c.cur[t] = c.pool.Get().(*pbatch[K, A])
	return c.raw.outlets[t].Send(p)
}
