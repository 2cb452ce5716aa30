package exchange

import (
	"sync"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
)

// routeEx is the sending side of a key-group exchange into a record
// operator: each record goes, as it is, into the batch of its key group's
// owner.
type routeEx[K comparable, T any] struct {
	key     func(T) K
	hash    func(K) uint64
	rt      *partition.Table
	outlets []runtime.Outlet
	size    int
	timed   bool
	cur     []*dataflow.Batch[T]
	pool    *sync.Pool
}

// NewRouteEx returns the exchange that sends each record, as it is, to
// the instance rt says owns its key group.
func NewRouteEx[K comparable, T any](key func(T) K, rt *partition.Table, outlets []runtime.Outlet, size int, timed, dist bool) *routeEx[K, T] {
	mustRoute(rt, outlets)
	h := KeyHasher[K](dist)
	e := &routeEx[K, T]{key: key, hash: h, rt: rt, outlets: outlets, size: size, timed: timed, pool: framePool[T](size, timed)}
	e.cur = make([]*dataflow.Batch[T], len(outlets))
	for i := range e.cur {
		e.cur[i] = e.pool.Get().(*dataflow.Batch[T])
	}
	return e
}

func (e *routeEx[K, T]) Push(b *dataflow.Batch[T]) error {
	n := b.Len()
	for j := 0; j < n; j++ {
		i := j
		if b.Sel != nil {
			i = int(b.Sel[j])
		}
		v := b.V[i]
		t := e.rt.Route(e.hash(e.key(v)))
		c := e.cur[t]
		c.V = append(c.V, v)
		if e.timed {
			c.Ts = append(c.Ts, b.Ts[i])
		}
		if len(c.V) >= e.size {
			if err := e.Flush(int(t)); err != nil {
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

func (e *routeEx[K, T]) Mark(m progress.Marker) error {
	for t := range e.outlets {
		if err := e.Flush(t); err != nil {
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
