package op

import (
	"fmt"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/codec"
	"github.com/weirstream/weir/internal/partition"
)

// The keyed operators hand key groups over while the job runs
// (dataflow.KeyedMover): the blobs are those of a checkpoint, so the new
// owner adds them with RestoreKeyed.

// extractTable encodes the key groups of t that take selects, like
// snapshotTable, and deletes their keys from t.
func extractTable[K comparable, V any](t keyedStore[K, V], wm int64, op string, groups int, take func(uint32) bool, out []checkpoint.StateBlob) ([]checkpoint.StateBlob, error) {
	c, err := codec.For[keyedBlob[K, V]]()
	if err != nil {
		return out, fmt.Errorf("weir: %s: state cannot be moved: %w", op, err)
	}
	type gone struct {
		h uint64
		k K
	}
	var del []gone
	by := map[uint32]*keyedBlob[K, V]{}
	t.Range(func(h uint64, k K, v *V) bool {
		kg := uint32(partition.KeyGroupOf(h, groups))
		if !take(kg) {
			return true
		}
		b := by[kg]
		if b == nil {
			b = &keyedBlob[K, V]{WM: wm}
			by[kg] = b
		}
		b.Entries = append(b.Entries, keyedEntry[K, V]{H: h, Key: k, Val: *v})
		del = append(del, gone{h, k})
		return true
	})
	// As in snapshotTable: each key group encoded into a scratch buffer,
	// which becomes the blob if the encoding fills most of it, else is
	// copied out at its size into a buffer of the pool. The blob is not
	// marked Pooled: it goes to the new owner, in this process or over
	// the network, and nothing tracks when that owner is done with it, so
	// the collector takes it.
	scratch := takeScratch()
	for kg, b := range by {
		scratch = c.Append(scratch[:0], []keyedBlob[K, V]{*b})
		delete(by, kg)
		data := scratch
		if checkpoint.Fits(scratch) {
			noteScratch(len(scratch))
			scratch = takeScratch()
		} else {
			data = checkpoint.Buffer(len(scratch))
			copy(data, scratch)
		}
		out = append(out, checkpoint.StateBlob{Operator: op, KeyGroup: kg, Data: data})
	}
	dropScratch(scratch)
	for _, g := range del {
		t.Delete(g.h, g.k)
	}
	if f, ok := t.(flusher); ok {
		if err := f.Flush(); err != nil {
			return out, fmt.Errorf("weir: %s: dropping moved state: %w", op, err)
		}
	}
	return out, nil
}

func (w *windowed[K, S, O]) ExtractKeyed(op string, groups int, take func(uint32) bool, out []checkpoint.StateBlob) ([]checkpoint.StateBlob, error) {
	// w.next may now be early: the next firing scans and sets it again.
	return extractTable(w.table, w.wm, op, groups, take, out)
}

func (t *pairTask[K, L, R, O]) ExtractKeyed(op string, groups int, take func(uint32) bool, out []checkpoint.StateBlob) ([]checkpoint.StateBlob, error) {
	return extractTable(t.table, t.wm, op, groups, take, out)
}

func (p *processState[K, S]) ExtractKeyed(op string, groups int, take func(uint32) bool, out []checkpoint.StateBlob) ([]checkpoint.StateBlob, error) {
	return extractTable(p.table, 0, op, groups, take, out)
}

func (o *ttlProcessOp[K, T, S, U]) ExtractKeyed(op string, groups int, take func(uint32) bool, out []checkpoint.StateBlob) ([]checkpoint.StateBlob, error) {
	return extractTable(o.table, o.wm, op, groups, take, out)
}

func (p *procCore[K, S, U]) ExtractKeyed(op string, groups int, take func(uint32) bool, out []checkpoint.StateBlob) ([]checkpoint.StateBlob, error) {
	out, err := extractTable[K, procEntry[S]](p.table, p.wm, op, groups, take, out)
	if err != nil {
		return out, err
	}
	if p.live[0]+p.live[1] > 0 {
		// The timer index holds the keys that left: build it again from
		// the keys that stay.
		err = p.reindex()
	}
	return out, err
}
