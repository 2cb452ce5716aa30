package op

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/codec"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/exchange"
	"github.com/weirstream/weir/internal/partition"
)

// keyedEntry is one key's state in a snapshot: its hash, key and value.
type keyedEntry[K comparable, V any] struct {
	H   uint64
	Key K
	Val V
}

// keyedBlob is the state of one key group of one instance, with the
// instance's watermark (the same on every instance of an operator: they
// align the same senders' markers).
type keyedBlob[K comparable, V any] struct {
	WM      int64
	Entries []keyedEntry[K, V]
}

// snapshotTable encodes a state table by key group.
func snapshotTable[K comparable, V any](t keyedStore[K, V], wm int64, op string, groups int, out []checkpoint.StateBlob) ([]checkpoint.StateBlob, error) {
	c, err := codec.For[keyedBlob[K, V]]()
	if err != nil {
		return out, fmt.Errorf("weir: %s: state cannot be saved: %w", op, err)
	}
	by := map[uint32]*keyedBlob[K, V]{}
	t.Range(func(h uint64, k K, v *V) bool {
		kg := uint32(partition.KeyGroupOf(h, groups))
		b := by[kg]
		if b == nil {
			b = &keyedBlob[K, V]{WM: wm}
			by[kg] = b
		}
		b.Entries = append(b.Entries, keyedEntry[K, V]{H: h, Key: k, Val: *v})
		return true
	})
	// Each key group is encoded into a scratch buffer of the pool as
	// large as the largest key group's encoding seen. If the encoding
	// fills most of it (key groups of about one size), the buffer becomes
	// the blob and a new scratch buffer is taken; else the encoding is
	// copied out at its size into a buffer of the pool. Either way the
	// part's writer gives the blob's buffer back, and no blob grown by
	// appending keeps much more than its length or leaves each smaller
	// copy behind as garbage. Keeping the buffer saves a copy of the
	// state at each checkpoint, on the task's goroutine.
	scratch := takeScratch()
	for kg, b := range by {
		scratch = c.Append(scratch[:0], []keyedBlob[K, V]{*b})
		delete(by, kg) // its entries are garbage from here
		if checkpoint.Fits(scratch) {
			noteScratch(len(scratch))
			out = append(out, checkpoint.OwnedBlob(op, kg, scratch))
			scratch = takeScratch()
			continue
		}
		out = append(out, checkpoint.PooledBlob(op, kg, scratch))
	}
	dropScratch(scratch)
	return out, nil
}

// scratchHint is the largest key group's encoding seen, the size of the
// scratch buffers snapshots and handovers take.
var scratchHint atomic.Int64

// takeScratch returns an empty scratch buffer of the pool, as large as the
// largest key group's encoding seen (so that encoding one does not grow
// it into new memory).
func takeScratch() []byte {
	return checkpoint.Buffer(int(max(scratchHint.Load(), 64<<10)))[:0]
}

// dropScratch gives scratch back to the pool, noting its size.
func dropScratch(scratch []byte) {
	noteScratch(len(scratch))
	checkpoint.Release(scratch)
}

// noteScratch raises scratchHint to n.
func noteScratch(n int) {
	for h := scratchHint.Load(); int64(n) > h && !scratchHint.CompareAndSwap(h, int64(n)); h = scratchHint.Load() {
	}
}

// restoreTable adds the entries of blobs to t and returns the highest
// watermark they were saved at.
func restoreTable[K comparable, V any](t keyedStore[K, V], blobs [][]byte, each func(v *V)) (int64, error) {
	c, err := codec.For[keyedBlob[K, V]]()
	if err != nil {
		return 0, err
	}
	wm := int64(-1 << 63)
	for _, data := range blobs {
		bs, err := c.Decode(data, nil)
		if err != nil || len(bs) != 1 {
			return 0, fmt.Errorf("weir: restoring state: %v", err)
		}
		wm = max(wm, bs[0].WM)
		for _, e := range bs[0].Entries {
			v := t.Upsert(e.H, e.Key)
			*v = e.Val
			if each != nil {
				each(v)
			}
		}
	}
	return wm, nil
}

// Watermarked is a keyed operator whose watermark is saved per instance.
type Watermarked interface {
	Watermark() int64
	RestoreWatermark(wm int64)
}

// wmSuffix names an operator's per-instance watermark blobs.
const WmSuffix = "#watermark"

// processState is the per-key state of one Process instance.
type processState[K comparable, S any] struct {
	table keyedStore[K, S]
}

func (p *processState[K, S]) SnapshotKeyed(op string, groups int, out []checkpoint.StateBlob) ([]checkpoint.StateBlob, error) {
	return snapshotTable(p.table, 0, op, groups, out)
}

func (p *processState[K, S]) RestoreKeyed(blobs [][]byte) error {
	_, err := restoreTable(p.table, blobs, nil)
	if f, ok := p.table.(flusher); ok && err == nil {
		err = f.Flush()
	}
	return err
}

func (o *eventTimeOp[T]) SnapshotInstance() ([]byte, error) {
	b := binary.AppendVarint(nil, o.max)
	return binary.AppendVarint(b, o.wm), nil
}

func (o *eventTimeOp[T]) RestoreInstance(data []byte) error {
	r := &exchange.Reader{B: data}
	o.max, o.wm = r.Varint(), r.Varint()
	return r.Done()
}

// RestoreInstances takes the watermark of a run with another parallelism:
// the lowest of its instances', which holds back no record the old run
// counted on time (each window keeps its own watermark as well).
func (o *eventTimeOp[T]) RestoreInstances(all [][]byte) error {
	first := true
	for _, data := range all {
		if data == nil {
			continue
		}
		r := &exchange.Reader{B: data}
		mx, wm := r.Varint(), r.Varint()
		if err := r.Done(); err != nil {
			return err
		}
		if first || wm < o.wm {
			o.max, o.wm = mx, wm
		}
		first = false
	}
	return nil
}

// sinkState saves an output that implements Checkpointed.
type sinkState struct{ c dataflow.Checkpointed }

func (s sinkState) SnapshotInstance() ([]byte, error) { return s.c.Snapshot() }
func (s sinkState) RestoreInstance(data []byte) error { return s.c.Restore(data) }
