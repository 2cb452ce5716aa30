package weir

import (
	"sync"

	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
)

// sendEx is the sending side of forward, gather and rebalance exchanges:
// it copies records into batches of up to size records and sends each full
// batch to the next outlet in turn.
type sendEx[T any] struct {
	outlets []runtime.Outlet
	next    int
	size    int
	timed   bool
	cur     *batch[T]
	pool    *sync.Pool
}

func newSendEx[T any](outlets []runtime.Outlet, size int, timed bool) *sendEx[T] {
	e := &sendEx[T]{outlets: outlets, size: size, timed: timed, pool: framePool[T](size, timed)}
	e.cur = e.pool.Get().(*batch[T])
	return e
}

func (e *sendEx[T]) push(b *batch[T]) error {
	if b.sel != nil {
		for _, i := range b.sel {
			e.cur.v = append(e.cur.v, b.v[i])
			if e.timed {
				e.cur.ts = append(e.cur.ts, b.ts[i])
			}
			if len(e.cur.v) >= e.size {
				if err := e.flush(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	v, ts := b.v, b.ts
	for len(v) > 0 {
		room := e.size - len(e.cur.v)
		n := min(room, len(v))
		e.cur.v = append(e.cur.v, v[:n]...)
		if e.timed {
			e.cur.ts = append(e.cur.ts, ts[:n]...)
			ts = ts[n:]
		}
		v = v[n:]
		if len(e.cur.v) >= e.size {
			if err := e.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *sendEx[T]) flush() error {
	if len(e.cur.v) == 0 {
		return nil
	}
	o := e.outlets[e.next]
	e.next++
	if e.next == len(e.outlets) {
		e.next = 0
	}
	b := e.cur
	e.cur = e.pool.Get().(*batch[T])
	return o.Send(b)
}

func (e *sendEx[T]) mark(m progress.Marker) error {
	if err := e.flush(); err != nil {
		return err
	}
	for _, o := range e.outlets {
		if err := o.Mark(m); err != nil {
			return err
		}
	}
	return nil
}

// keyEx is the sending side of a key-group exchange: it computes each
// record's key and hash, finds the owner of the key group, and appends the
// record to that owner's batch.
type keyEx[K comparable, T any] struct {
	key     func(T) K
	hash    func(K) uint64
	groups  int
	owner   []uint16 // key group -> instance
	outlets []runtime.Outlet
	size    int
	cur     []*kbatch[K, T]
	pool    *sync.Pool
	// With statistics (st not nil): the records this sender received and
	// what it sent to each instance in the current epoch.
	st     *edgeStats
	sender int
	recv   int64
	sent   []int64
}

// withStats makes e report its loads to st at every epoch's end.
func (e *keyEx[K, T]) withStats(st *edgeStats, sender, senders int) *keyEx[K, T] {
	e.st, e.sender, e.sent = st, sender, make([]int64, len(e.outlets))
	st.init(senders, len(e.outlets))
	st.join(sender)
	return e
}

func newKeyEx[K comparable, T any](key func(T) K, groups int, outlets []runtime.Outlet, size int, dist bool) *keyEx[K, T] {
	h := keyHasher[K](dist)
	e := &keyEx[K, T]{key: key, hash: h, groups: groups, outlets: outlets, size: size}
	e.owner = make([]uint16, groups)
	for kg := range e.owner {
		e.owner[kg] = uint16(partition.Owner(partition.KeyGroup(kg), groups, len(outlets)))
	}
	e.pool = &sync.Pool{New: func() any {
		return &kbatch[K, T]{recs: make([]krec[K, T], 0, size), pool: e.pool}
	}}
	e.cur = make([]*kbatch[K, T], len(outlets))
	for i := range e.cur {
		e.cur[i] = e.pool.Get().(*kbatch[K, T])
	}
	return e
}

func (e *keyEx[K, T]) push(b *batch[T]) error {
	if e.st != nil {
		e.recv += int64(b.len())
	}
	if b.sel != nil {
		for _, i := range b.sel {
			if err := e.one(b, int(i)); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range b.v {
		if err := e.one(b, i); err != nil {
			return err
		}
	}
	return nil
}

func (e *keyEx[K, T]) one(b *batch[T], i int) error {
	v := b.v[i]
	k := e.key(v)
	var ts int64
	if b.ts != nil {
		ts = b.ts[i]
	}
	return e.send(e.hash(k), k, ts, v)
}

// send appends a record whose key and hash are known to its owner's batch.
func (e *keyEx[K, T]) send(h uint64, k K, ts int64, v T) error {
	t := e.owner[partition.KeyGroupOf(h, e.groups)]
	if e.sent != nil {
		e.sent[t]++
	}
	c := e.cur[t]
	c.recs = append(c.recs, krec[K, T]{h: h, ts: ts, k: k, v: v})
	if len(c.recs) >= e.size {
		return e.flush(int(t))
	}
	return nil
}

func (e *keyEx[K, T]) flush(t int) error {
	c := e.cur[t]
	if len(c.recs) == 0 {
		return nil
	}
	e.cur[t] = e.pool.Get().(*kbatch[K, T])
	return e.outlets[t].Send(c)
}

func (e *keyEx[K, T]) mark(m progress.Marker) error {
	if e.st != nil {
		e.st.report(e.sender, m, e.recv, e.sent)
		e.recv = 0
		clear(e.sent)
	}
	for t := range e.outlets {
		if err := e.flush(t); err != nil {
			return err
		}
	}
	for _, o := range e.outlets {
		if err := o.Mark(m); err != nil {
			return err
		}
	}
	return nil
}
