package op

import (
	"fmt"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/codec"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/state"
)

// A checkpoint of a memory table is taken at the marker as a shallow copy
// of every entry, by key group, which costs a scan and no copy of what
// the values point to. The table then calls touch before it hands out a
// pointer to a value or drops one (state.Table.Watch), and touch encodes
// that entry's whole key group from the copy first: nothing the copy
// points to can have changed before its key group is encoded. The rest is
// encoded a key group per Step, between the task's messages, so the
// task's latency pays for one key group at a time instead of the whole
// state at the marker.

// lazySnapshot is a checkpoint's snapshot of one memory table, encoded a
// key group at a time.
type lazySnapshot[K comparable, V any] struct {
	t       *state.Table[K, V]
	c       codec.Codec[keyedBlob[K, V]]
	op      string
	groups  int
	pending []*keyedBlob[K, V] // by key group: the shallow copy, nil once encoded
	left    int                // key groups pending
	next    int                // where Step looks first
	out     []checkpoint.StateBlob
	scratch []byte
	budget  int // bytes a Step encodes at least (stepBytes)
}

// beginSnapshot starts a lazy snapshot of t at watermark wm, or returns
// nil if t is not a memory table (a backend's store is saved whole by
// snapshotTable).
func beginSnapshot[K comparable, V any](t keyedStore[K, V], wm int64, op string, groups int) (dataflow.PendingSnapshot, error) {
	mt, ok := t.(*state.Table[K, V])
	if !ok {
		return nil, nil
	}
	c, err := codec.For[keyedBlob[K, V]]()
	if err != nil {
		return nil, fmt.Errorf("weir: %s: state cannot be saved: %w", op, err)
	}
	s := &lazySnapshot[K, V]{t: mt, c: c, op: op, groups: groups, pending: make([]*keyedBlob[K, V], groups), budget: stepBytes}
	mt.Peek(func(h uint64, k K, v *V) bool {
		kg := int(partition.KeyGroupOf(h, groups))
		b := s.pending[kg]
		if b == nil {
			b = &keyedBlob[K, V]{WM: wm}
			s.pending[kg] = b
			s.left++
		}
		b.Entries = append(b.Entries, keyedEntry[K, V]{H: h, Key: k, Val: *v})
		return true
	})
	if s.left > 0 {
		mt.Watch(s.touch)
	}
	return s, nil
}

// touch encodes the key group of hash h if it is pending.
func (s *lazySnapshot[K, V]) touch(h uint64) {
	if kg := int(partition.KeyGroupOf(h, s.groups)); s.pending[kg] != nil {
		s.encode(kg)
	}
}

// encode encodes pending key group kg into a blob of the pool.
func (s *lazySnapshot[K, V]) encode(kg int) {
	if s.scratch == nil {
		s.scratch = takeScratch()
	}
	s.scratch = s.c.Append(s.scratch[:0], []keyedBlob[K, V]{*s.pending[kg]})
	s.pending[kg] = nil // its entries are garbage from here
	s.out = append(s.out, checkpoint.PooledBlob(s.op, uint32(kg), s.scratch))
	s.left--
	if s.left == 0 {
		s.t.Watch(nil)
		dropScratch(s.scratch)
		s.scratch = nil
	}
}

// stepBytes is about how much a Step encodes: key groups until this many
// bytes, so that small state is done in one step and large key groups go
// one at a time.
const stepBytes = 1 << 20

func (s *lazySnapshot[K, V]) Step() bool {
	n := 0
	for ; s.left > 0 && n < s.budget; s.next++ {
		if s.pending[s.next] != nil {
			s.encode(s.next)
			n += len(s.out[len(s.out)-1].Data)
		}
	}
	return s.left > 0
}

func (s *lazySnapshot[K, V]) Finish(out []checkpoint.StateBlob) []checkpoint.StateBlob {
	for s.Step() {
	}
	out = append(out, s.out...)
	s.out = nil
	return out
}

// The keyed operators whose state is one table snapshot it lazily.

func (w *windowed[K, S, O]) BeginSnapshotKeyed(op string, groups int) (dataflow.PendingSnapshot, error) {
	return beginSnapshot(w.table, w.wm, op, groups)
}

func (t *pairTask[K, L, R, O]) BeginSnapshotKeyed(op string, groups int) (dataflow.PendingSnapshot, error) {
	return beginSnapshot(t.table, t.wm, op, groups)
}

func (p *processState[K, S]) BeginSnapshotKeyed(op string, groups int) (dataflow.PendingSnapshot, error) {
	return beginSnapshot(p.table, 0, op, groups)
}

func (o *ttlProcessOp[K, T, S, U]) BeginSnapshotKeyed(op string, groups int) (dataflow.PendingSnapshot, error) {
	return beginSnapshot(o.table, o.wm, op, groups)
}

func (p *procCore[K, S, U]) BeginSnapshotKeyed(op string, groups int) (dataflow.PendingSnapshot, error) {
	return beginSnapshot[K, procEntry[S]](p.table, p.wm, op, groups)
}

// peek is Range for f that changes nothing: a memory table does not
// count it as an access (state.Table.Peek).
func peek[K comparable, V any](t keyedStore[K, V], f func(h uint64, k K, v *V) bool) {
	if mt, ok := t.(*state.Table[K, V]); ok {
		mt.Peek(f)
		return
	}
	t.Range(f)
}
