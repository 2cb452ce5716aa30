package op

import (
	"math"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/progress"
)

// ttlProcessOp is an instance of Process with a state TTL: each key's
// state lives in an entry with its last touch (every record touches its
// key's state), and expires at epoch ends and when touched (see
// kttl.go).
type ttlProcessOp[K comparable, T, S, U any] struct {
	*flatMapOp[T, U]
	table   keyedStore[K, procEntry[S]]
	ttl     stateTTL
	wm, now int64
	ts      int64 // the event time of the record being processed
	clock   func() int64
}

func newTTLProcess[K comparable, T, S, U any](k KeyedStream[K, T], h func(K) uint64, f func(K, *S, T, []U) []U,
	tc dataflow.TaskCtx, out dataflow.Pusher[U], ttl dataflow.TTL) dataflow.Pusher[T] {
	table, err := newStore[K, procEntry[S]](k.s.job, tc.Op, tc.Inst)
	if err != nil {
		return &failOp[T]{err: err}
	}
	o := &ttlProcessOp[K, T, S, U]{table: table, ttl: newStateTTL(ttl), wm: progress.NoWatermark, clock: k.s.job.ProcessingClock()}
	o.flatMapOp = &flatMapOp[T, U]{out: out, name: tc.Op, sel: tc.Sel, ts: &o.ts}
	o.f = func(v T, out []U) []U {
		key := k.key(v)
		e := o.table.Upsert(h(key), key)
		return f(key, e.touch(&o.ttl, o.ttl.clock(o.ts, o.now), o.ttl.clock(o.wm, o.now)), v, out)
	}
	return o
}

func (o *ttlProcessOp[K, T, S, U]) Push(b *dataflow.Batch[T]) error {
	o.now = o.clock()
	return o.flatMapOp.Push(b)
}

func (o *ttlProcessOp[K, T, S, U]) Mark(m progress.Marker) error {
	o.wm = max(o.wm, m.Watermark)
	o.now = o.clock()
	expireEntries(o.table, &o.ttl, o.ttl.clock(o.wm, o.now))
	if f, ok := o.table.(flusher); ok {
		if err := f.Flush(); err != nil {
			return err
		}
	}
	return o.flatMapOp.Mark(m)
}

func (o *ttlProcessOp[K, T, S, U]) SnapshotKeyed(op string, groups int, out []checkpoint.StateBlob) ([]checkpoint.StateBlob, error) {
	return snapshotTable(o.table, o.wm, op, groups, out)
}

func (o *ttlProcessOp[K, T, S, U]) RestoreKeyed(blobs [][]byte) error {
	wm, err := restoreTable(o.table, blobs, nil)
	if err != nil {
		return err
	}
	if len(blobs) > 0 {
		o.wm = max(o.wm, wm)
	}
	o.ttl.next = math.MinInt64 // the first epoch end looks at every key
	if f, ok := o.table.(flusher); ok {
		return f.Flush()
	}
	return nil
}

func (o *ttlProcessOp[K, T, S, U]) Watermark() int64          { return o.wm }
func (o *ttlProcessOp[K, T, S, U]) RestoreWatermark(wm int64) { o.wm = max(o.wm, wm) }
