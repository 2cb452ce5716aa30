package exchange

import (
	"sync"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/runtime"
)

// routeEx is the sending side of a key-group exchange into a record
// operator: each record goes, as it is, into the batch of its key group's
// owner.
type routeEx[K comparable, T any] struct {
	recordRouter[K, T]
	size int
}

// recordRouter is what the exchanges that send records as they are
// (routeEx, and ordKeyEx in an ordered job) share: the key, its hash, the
// routing table, and the frame being filled for each receiving instance.
type recordRouter[K comparable, T any] struct {
	key     func(T) K
	hash    func(K) uint64
	rt      *partition.Table
	outlets []runtime.Outlet
	timed   bool
	cur     []*dataflow.Batch[T]
	pool    *sync.Pool
	keys    *metrics.KeyCounter // counts per key group, if set
	sched   *routing.Schedule   // the schedule rt follows, if set
}

// Follow makes e route each epoch by the table s has in force for it,
// from the epoch after the next marker on.
func (e *routeEx[K, T]) Follow(s *routing.Schedule) *routeEx[K, T] {
	e.sched = s
	return e
}

func newRecordRouter[K comparable, T any](key func(T) K, rt *partition.Table, outlets []runtime.Outlet, frame int, timed, dist bool) recordRouter[K, T] {
	mustRoute(rt, outlets)
	r := recordRouter[K, T]{key: key, hash: KeyHasher[K](dist), rt: rt, outlets: outlets, timed: timed, pool: framePool[T](frame, timed),
		keys: keyCounter(outlets)}
	r.cur = make([]*dataflow.Batch[T], len(outlets))
	for i := range r.cur {
		r.cur[i] = r.pool.Get().(*dataflow.Batch[T])
	}
	return r
}

// add appends record i of b to the frame of its key group's owner and
// returns the owner.
func (r *recordRouter[K, T]) add(b *dataflow.Batch[T], i int) int {
	v := b.V[i]
	t := route(r.rt, r.keys, r.hash(r.key(v)))
	c := r.cur[t]
	c.V = append(c.V, v)
	if r.timed {
		c.Ts = append(c.Ts, b.Ts[i])
	}
	return t
}

// NewRouteEx returns the exchange that sends each record, as it is, to
// the instance rt says owns its key group.
func NewRouteEx[K comparable, T any](key func(T) K, rt *partition.Table, outlets []runtime.Outlet, size int, timed, dist bool) *routeEx[K, T] {
	return &routeEx[K, T]{recordRouter: newRecordRouter(key, rt, outlets, size, timed, dist), size: size}
}

func (e *routeEx[K, T]) Push(b *dataflow.Batch[T]) error {
	n := b.Len()
	for j := 0; j < n; j++ {
		i := j
		if b.Sel != nil {
			i = int(b.Sel[j])
		}
		if t := e.add(b, i); len(e.cur[t].V) >= e.size {
			if err := e.Flush(t); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *routeEx[K, T]) Flush(t int) error {
	c := e.cur[t]
	if len(c.V) == 0 {
		return nil
	}
	e.cur[t] = e.pool.Get().(*dataflow.Batch[T])
	return e.outlets[t].Send(c)
}

// publish adds the counts per key group to the operator's load.
func (r *recordRouter[K, T]) publish() {
	if r.keys != nil {
		r.keys.Publish()
	}
}

func (e *routeEx[K, T]) Mark(m progress.Marker) error {
	e.publish()
	for t := range e.outlets {
		if err := e.Flush(t); err != nil {
			return err
		}
	}
	if e.sched != nil {
		// The next epoch is entered before this one ends: a table, and
		// the joins of its instances, come too late from then on.
		e.rt = e.sched.Enter(uint64(m.Epoch) + 1)
	}
	return markAll(e.outlets, m)
}
