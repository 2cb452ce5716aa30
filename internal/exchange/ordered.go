package exchange

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
)

// Order in an ordered job (see Ordered and docs/design.md, "Order").
//
// The source, read by one instance, numbers each batch it reads: a unit.
// Every stage processes units in their order and turns each into exactly
// one frame per receiving instance, empty if nothing came out (a pulse):
//
//   - A serial or round-robin region sees whole units: receiver j of N
//     takes units j, j+N, j+2N..., and unit u comes from sender u mod M
//     (round-robin merge).
//   - A keyed region sees parts: the exchange into it sends every receiver
//     its part of every unit, and numbers the records by their position
//     in the unit (seq). A receiver fed by a keyed region takes unit u's
//     part from every sender and merges them by seq.
//
// seq encodes an interval of the unit's order: the high bits its start,
// the low 6 bits the log2 of its width. A record at position p starts as
// [p<<32, (p+1)<<32); an operator that makes m outputs of one record cuts
// its interval into m parts, so outputs keep their place between the
// records around them wherever they go next.

const (
	seqLogBits = 6
	seqLogMask = 1<<seqLogBits - 1
	seqUnitLog = 32
)

// errSeqDepth: a record's number has 26 bits to share among the outputs
// of operators that make several of one record, from the split into a
// keyed region to the next merge into whole units (a serial or
// round-robin stage): each such operator making m outputs of a record
// uses log2(m) bits of them.
var errSeqDepth = errors.New("weir: ordered job: operators in keyed regions made more than 2^26 outputs of one record (counting each operator's fan-out, up to the next serial or round-robin stage, which renumbers)")

// seqAt is the sequence number of position p of a whole unit.
func seqAt(p int) uint64 { return uint64(p)<<seqUnitLog | seqUnitLog }

// Subdivide appends the sequence numbers of m outputs of the record
// numbered s.
func Subdivide(s uint64, m int, out []uint64) ([]uint64, error) {
	if m == 1 {
		return append(out, s), nil
	}
	log := int(s & seqLogMask)
	nl := log - bits.Len(uint(m-1))
	if nl < seqLogBits {
		return out, errSeqDepth
	}
	start := s &^ seqLogMask
	for i := 0; i < m; i++ {
		out = append(out, start+uint64(i)<<nl|uint64(nl))
	}
	return out, nil
}

// framePool makes pooled frames of T.
func framePool[T any](size int, timed bool) *sync.Pool {
	p := &sync.Pool{}
	p.New = func() any {
		b := &dataflow.Batch[T]{V: make([]T, 0, size), Pool: p}
		if timed {
			b.Ts = make([]int64, 0, size)
		}
		return b
	}
	return p
}

// ordSendEx is the sending side of an ordered round-robin split or merge:
// the records a unit leaves here go as one frame to receiver unit mod N.
// withSeq keeps the records' sequence numbers, which a sender in a keyed
// region must send for the receiver's merge.
type ordSendEx[T any] struct {
	outlets []runtime.Outlet
	timed   bool
	withSeq bool
	cur     *dataflow.Batch[T]
	pool    *sync.Pool
}

func NewOrdSendEx[T any](x dataflow.ExchangeCtx, size int, timed bool) *ordSendEx[T] {
	e := &ordSendEx[T]{outlets: x.Outlets, timed: timed, withSeq: !x.Whole, pool: framePool[T](size, timed)}
	e.cur = e.pool.Get().(*dataflow.Batch[T])
	x.Units.Exits = append(x.Units.Exits, e)
	return e
}

func (e *ordSendEx[T]) Push(b *dataflow.Batch[T]) error {
	if b.Sel == nil {
		e.cur.V = append(e.cur.V, b.V...)
		if e.timed {
			e.cur.Ts = append(e.cur.Ts, b.Ts...)
		}
		if e.withSeq {
			e.cur.Seq = append(e.cur.Seq, b.Seq...)
		}
		return nil
	}
	for _, i := range b.Sel {
		e.cur.V = append(e.cur.V, b.V[i])
		if e.timed {
			e.cur.Ts = append(e.cur.Ts, b.Ts[i])
		}
		if e.withSeq {
			e.cur.Seq = append(e.cur.Seq, b.Seq[i])
		}
	}
	return nil
}

func (e *ordSendEx[T]) EndUnit(unit int64) error {
	f := e.cur
	f.Unit = unit
	e.cur = e.pool.Get().(*dataflow.Batch[T])
	return e.outlets[unit%int64(len(e.outlets))].Send(f)
}

func (e *ordSendEx[T]) Mark(m progress.Marker) error {
	return markAll(e.outlets, m)
}

// ordKeyEx is the sending side of an ordered key-group split or shuffle:
// it sends every receiver a frame for every unit, holding the records its
// key groups own, numbered (a sender of whole units numbers them by
// position; a sender in a keyed region passes their numbers on).
type ordKeyEx[K comparable, T any] struct {
	recordRouter[K, T]
	whole bool
	pos   int
}

// NewOrdKeyEx returns the keyed exchange of an ordered job: records go
// to the owners of their key groups (by x.Routing) with their sequence
// numbers.
func NewOrdKeyEx[K comparable, T any](key func(T) K, x dataflow.ExchangeCtx, size int, timed bool) *ordKeyEx[K, T] {
	e := &ordKeyEx[K, T]{recordRouter: newRecordRouter(key, x.Routing, x.Outlets, size/max(1, len(x.Outlets)), timed, x.Dist), whole: x.Whole}
	x.Units.Exits = append(x.Units.Exits, e)
	return e
}

func (e *ordKeyEx[K, T]) Push(b *dataflow.Batch[T]) error {
	n := b.Len()
	for j := 0; j < n; j++ {
		i := j
		if b.Sel != nil {
			i = int(b.Sel[j])
		}
		c := e.cur[e.add(b, i)]
		if e.whole {
			c.Seq = append(c.Seq, seqAt(e.pos))
			e.pos++
		} else {
			c.Seq = append(c.Seq, b.Seq[i])
		}
	}
	return nil
}

func (e *ordKeyEx[K, T]) EndUnit(unit int64) error {
	e.pos = 0
	for t, o := range e.outlets {
		f := e.cur[t]
		f.Unit = unit
		e.cur[t] = e.pool.Get().(*dataflow.Batch[T])
		if err := o.Send(f); err != nil {
			return err
		}
	}
	return nil
}

func (e *ordKeyEx[K, T]) Mark(m progress.Marker) error {
	e.publish()
	return markAll(e.outlets, m)
}

// ordTask is an ordered task instance: it takes its units in sequence,
// merges the parts of a unit by sequence number when its senders are in a
// keyed region, and pushes each unit through its chain.
type ordTask[T any] struct {
	r      dataflow.OrdRecv
	units  *dataflow.UnitCtx
	out    dataflow.Pusher[T]
	next   int64
	parts  []*dataflow.Batch[T]
	merged dataflow.Batch[T]
	heads  []int
}

func NewOrdTask[T any](r dataflow.OrdRecv, units *dataflow.UnitCtx, out dataflow.Pusher[T]) *ordTask[T] {
	return &ordTask[T]{r: r, units: units, out: out, next: r.First, heads: make([]int, r.Senders)}
}

func (t *ordTask[T]) Next() int {
	if t.r.Whole {
		return int(t.next % int64(t.r.Senders))
	}
	return len(t.parts)
}

func (t *ordTask[T]) Batch(port int, b any) error {
	f := b.(*dataflow.Batch[T])
	if f.Unit != t.next {
		return fmt.Errorf("weir: ordered input: unit %d arrived where unit %d was due", f.Unit, t.next)
	}
	if t.r.Whole {
		seq := f.Seq
		if !t.r.KeepSeq {
			f.Seq = nil // the numbers end here; the frame keeps its buffer
		}
		err := t.Run(f)
		f.Seq = seq
		f.Release()
		return err
	}
	t.parts = append(t.parts, f)
	if len(t.parts) < t.r.Senders {
		return nil
	}
	m := t.Merge()
	err := t.Run(m)
	for i, p := range t.parts {
		p.Release()
		t.parts[i] = nil
	}
	t.parts = t.parts[:0]
	clear(m.V)
	return err
}

// Run pushes one unit through the chain and ends it at the chain's
// ordered exchanges.
func (t *ordTask[T]) Run(f *dataflow.Batch[T]) error {
	if len(f.Seq) == 0 {
		f.Seq = nil
	}
	if len(f.Ts) == 0 && len(f.V) > 0 {
		f.Ts = nil
	}
	t.units.Unit = t.next
	t.next += t.r.Step
	if len(f.V) > 0 {
		if err := t.out.Push(f); err != nil {
			return err
		}
	}
	return t.units.End()
}

// Merge joins the parts of one unit by sequence number. Numbers are
// distinct across parts (each record was in one part), and a part is in
// order, so taking the lowest head each time restores the unit's order.
// It copies a run at a time: from the part with the lowest head, every
// record below the lowest head of the others.
func (t *ordTask[T]) Merge() *dataflow.Batch[T] {
	m := &t.merged
	m.V, m.Ts, m.Seq = m.V[:0], m.Ts[:0], m.Seq[:0]
	timed := false
	for i, p := range t.parts {
		t.heads[i] = 0
		timed = timed || len(p.Ts) > 0
	}
	for {
		best, bound := -1, uint64(math.MaxUint64)
		var low uint64
		for i, p := range t.parts {
			h := t.heads[i]
			if h == len(p.V) {
				continue
			}
			switch s := p.Seq[h]; {
			case best < 0 || s < low:
				if best >= 0 {
					bound = low
				}
				best, low = i, s
			case s < bound:
				bound = s
			}
		}
		if best < 0 {
			return m
		}
		p, h := t.parts[best], t.heads[best]
		end := h + 1
		for end < len(p.V) && p.Seq[end] < bound {
			end++
		}
		m.V = append(m.V, p.V[h:end]...)
		if timed {
			m.Ts = append(m.Ts, p.Ts[h:end]...)
		}
		if t.r.KeepSeq {
			m.Seq = append(m.Seq, p.Seq[h:end]...)
		}
		t.heads[best] = end
	}
}

func (t *ordTask[T]) Mark(m progress.Marker) error {
	if len(t.parts) > 0 {
		return fmt.Errorf("weir: ordered input: epoch %d ended inside unit %d", m.Epoch, t.next)
	}
	return t.out.Mark(m)
}
