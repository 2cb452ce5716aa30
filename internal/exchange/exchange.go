package exchange

import (
	"fmt"
	"sync"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/routing"
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
	cur     *dataflow.Batch[T]
	pool    *sync.Pool
}

func NewSendEx[T any](outlets []runtime.Outlet, size int, timed bool) *sendEx[T] {
	e := &sendEx[T]{outlets: outlets, size: size, timed: timed, pool: framePool[T](size, timed)}
	e.cur = e.pool.Get().(*dataflow.Batch[T])
	return e
}

func (e *sendEx[T]) Push(b *dataflow.Batch[T]) error {
	if b.Sel != nil {
		for _, i := range b.Sel {
			e.cur.V = append(e.cur.V, b.V[i])
			if e.timed {
				e.cur.Ts = append(e.cur.Ts, b.Ts[i])
			}
			if len(e.cur.V) >= e.size {
				if err := e.Flush(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	v, ts := b.V, b.Ts
	for len(v) > 0 {
		room := e.size - len(e.cur.V)
		n := min(room, len(v))
		e.cur.V = append(e.cur.V, v[:n]...)
		if e.timed {
			e.cur.Ts = append(e.cur.Ts, ts[:n]...)
			ts = ts[n:]
		}
		v = v[n:]
		if len(e.cur.V) >= e.size {
			if err := e.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *sendEx[T]) Flush() error {
	if len(e.cur.V) == 0 {
		return nil
	}
	// Receivers that retired are passed over.
	var o runtime.Outlet
	for tries := 0; ; tries++ {
		o = e.outlets[e.next]
		e.next++
		if e.next == len(e.outlets) {
			e.next = 0
		}
		if !o.Retired() || tries == len(e.outlets) {
			break
		}
	}
	b := e.cur
	e.cur = e.pool.Get().(*dataflow.Batch[T])
	return o.Send(b)
}

func (e *sendEx[T]) Mark(m progress.Marker) error {
	if err := e.Flush(); err != nil {
		return err
	}
	return markAll(e.outlets, m)
}

// KeyEx is the sending side of a key-group exchange: it computes each
// record's key and hash, finds the owner of the key group, and appends the
// record to that owner's batch.
type KeyEx[K comparable, T any] struct {
	key     func(T) K
	hash    func(K) uint64
	rt      *partition.Table // key group -> instance
	Outlets []runtime.Outlet
	size    int
	cur     []*dataflow.Kbatch[K, T]
	pool    *sync.Pool
	// With statistics (st not nil): the records this sender received and
	// what it sent to each instance in the current epoch.
	st     *EdgeStats
	sender int
	recv   int64
	sent   []int64
	// keys, if set, counts the records sent to each key group.
	keys *metrics.KeyCounter
	// sched, if set, is the schedule rt follows: at each marker the
	// exchange takes the table of the epoch it enters.
	sched *routing.Schedule
}

// Follow makes e route each epoch by the table s has in force for it,
// from the epoch after the next marker on (rt until then).
func (e *KeyEx[K, T]) Follow(s *routing.Schedule) *KeyEx[K, T] {
	e.sched = s
	return e
}

// WithStats makes e report its loads to st at every epoch's end.
func (e *KeyEx[K, T]) WithStats(st *EdgeStats, sender, senders int) *KeyEx[K, T] {
	e.st, e.sender, e.sent = st, sender, make([]int64, len(e.Outlets))
	st.Init(senders, len(e.Outlets))
	st.join(sender)
	return e
}

// NewKeyEx returns the keyed exchange that sends each record, with its
// key and hash, to the instance rt says owns its key group.
func NewKeyEx[K comparable, T any](key func(T) K, rt *partition.Table, outlets []runtime.Outlet, size int, dist bool) *KeyEx[K, T] {
	mustRoute(rt, outlets)
	h := KeyHasher[K](dist)
	e := &KeyEx[K, T]{key: key, hash: h, rt: rt, Outlets: outlets, size: size, keys: keyCounter(outlets)}
	e.pool = &sync.Pool{New: func() any {
		return &dataflow.Kbatch[K, T]{Recs: make([]dataflow.Krec[K, T], 0, size), Pool: e.pool}
	}}
	e.cur = make([]*dataflow.Kbatch[K, T], len(outlets))
	for i := range e.cur {
		e.cur[i] = e.pool.Get().(*dataflow.Kbatch[K, T])
	}
	return e
}

func (e *KeyEx[K, T]) Push(b *dataflow.Batch[T]) error {
	if e.st != nil {
		e.recv += int64(b.Len())
	}
	if b.Sel != nil {
		for _, i := range b.Sel {
			if err := e.One(b, int(i)); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range b.V {
		if err := e.One(b, i); err != nil {
			return err
		}
	}
	return nil
}

func (e *KeyEx[K, T]) One(b *dataflow.Batch[T], i int) error {
	v := b.V[i]
	k := e.key(v)
	var ts int64
	if b.Ts != nil {
		ts = b.Ts[i]
	}
	_, err := e.Send(e.hash(k), k, ts, v)
	return err
}

// Send appends a record whose key and hash are known to its owner's
// batch and returns the owner.
func (e *KeyEx[K, T]) Send(h uint64, k K, ts int64, v T) (int, error) {
	t := e.owner(h)
	e.countSent(t)
	c := e.cur[t]
	c.Recs = append(c.Recs, dataflow.Krec[K, T]{H: h, Ts: ts, K: k, V: v})
	if len(c.Recs) >= e.size {
		return t, e.Flush(t)
	}
	return t, nil
}

func (e *KeyEx[K, T]) Flush(t int) error {
	c := e.cur[t]
	if len(c.Recs) == 0 {
		return nil
	}
	e.cur[t] = e.pool.Get().(*dataflow.Kbatch[K, T])
	return e.Outlets[t].Send(c)
}

func (e *KeyEx[K, T]) Mark(m progress.Marker) error {
	if e.keys != nil {
		e.keys.Publish()
	}
	if e.st != nil {
		e.st.Report(e.sender, m, e.recv, e.sent)
		e.recv = 0
		clear(e.sent)
	}
	for t := range e.Outlets {
		if err := e.Flush(t); err != nil {
			return err
		}
	}
	if e.sched != nil {
		// The next epoch is entered before this one ends: a table, and
		// the joins of its instances, come too late from then on.
		e.rt = e.sched.Enter(uint64(m.Epoch) + 1)
	}
	return markAll(e.Outlets, m)
}

// mustRoute checks that rt assigns key groups to the outlets there are.
func mustRoute(rt *partition.Table, outlets []runtime.Outlet) {
	if rt.Instances() != len(outlets) {
		panic(fmt.Sprintf("weir: a keyed exchange routes by a %v to %d instances", rt, len(outlets)))
	}
}

// owner returns the instance that owns the key hashed h, counting the
// record in its key group.
func (e *KeyEx[K, T]) owner(h uint64) int { return route(e.rt, e.keys, h) }

// route returns the instance of rt that owns the key hashed h, and counts
// the record in keys (if not nil).
func route(rt *partition.Table, keys *metrics.KeyCounter, h uint64) int {
	kg := partition.KeyGroupOf(h, rt.Groups())
	if keys != nil {
		keys.N[kg]++
	}
	return rt.Owner(kg)
}

// keyCounter returns the count per key group the outlets carry, or nil.
func keyCounter(outlets []runtime.Outlet) *metrics.KeyCounter {
	if len(outlets) == 0 {
		return nil
	}
	return outlets[0].Keys()
}

// countSent counts a message sent to instance t, with statistics.
func (e *KeyEx[K, T]) countSent(t int) {
	if e.sent != nil {
		e.sent[t]++
	}
}

// received counts n records the sender received, with statistics.
func (e *KeyEx[K, T]) received(n int) {
	if e.st != nil {
		e.recv += int64(n)
	}
}

// sendTo sends msg, a batch, to instance t.
func (e *KeyEx[K, T]) sendTo(t int, msg any) error { return e.Outlets[t].Send(msg) }

// markAll sends marker m on every outlet, once the batches before it are
// sent.
func markAll(outlets []runtime.Outlet, m progress.Marker) error {
	for _, o := range outlets {
		if err := o.Mark(m); err != nil {
			return err
		}
	}
	return nil
}
