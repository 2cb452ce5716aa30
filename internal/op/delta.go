package op

import (
	"fmt"

	"github.com/weirstream/weir/internal/codec"
	"github.com/weirstream/weir/internal/window"
)

// A key group can leave its instance as a delta on the blob a complete
// checkpoint holds of it (dataflow.DeltaMover): the keys that are new or
// whose value changed, and those that are gone. The new owner merges it
// into that blob, read from the checkpoint, and restores the result.

// keyedKey is one key of a keyed blob: its hash and the key.
type keyedKey[K comparable] struct {
	H   uint64
	Key K
}

// keyedDelta turns a key group's blob (the base) into another of the same
// key group: Set holds the keys that are new or whose value's encoding
// differs from the base's, Gone the keys of the base that are not in the
// other; WM is the other's watermark.
type keyedDelta[K comparable, V any] struct {
	WM   int64
	Set  []keyedEntry[K, V]
	Gone []keyedKey[K]
}

// decodeOne decodes a blob that holds one value of T.
func decodeOne[T any](c codec.Codec[T], b []byte, what string) (T, error) {
	var zero T
	vs, err := c.Decode(b, nil)
	if err != nil {
		return zero, fmt.Errorf("weir: a corrupt %s: %w", what, err)
	}
	if len(vs) != 1 {
		return zero, fmt.Errorf("weir: a corrupt %s: %d values, want 1", what, len(vs))
	}
	return vs[0], nil
}

// deltaBlob returns the delta that turns base into cur, two blobs of one
// key group (snapshotTable's encoding). Values are compared by their
// codec's encoding, so a value that holds a map may count as changed
// when it is not (maps encode in iteration order): the delta is then
// larger, never wrong.
func deltaBlob[K comparable, V any](base, cur []byte) ([]byte, error) {
	bc, err := codec.For[keyedBlob[K, V]]()
	if err != nil {
		return nil, err
	}
	vc, err := codec.For[V]()
	if err != nil {
		return nil, err
	}
	dc, err := codec.For[keyedDelta[K, V]]()
	if err != nil {
		return nil, err
	}
	b, err := decodeOne(bc, base, "checkpoint blob")
	if err != nil {
		return nil, err
	}
	c, err := decodeOne(bc, cur, "key group's blob")
	if err != nil {
		return nil, err
	}
	old := make(map[keyedKey[K]]int, len(b.Entries)) // base entries not yet seen in cur
	for i, e := range b.Entries {
		old[keyedKey[K]{e.H, e.Key}] = i
	}
	var was, now []byte
	d := keyedDelta[K, V]{WM: c.WM}
	for _, e := range c.Entries {
		k := keyedKey[K]{e.H, e.Key}
		if i, ok := old[k]; ok {
			delete(old, k)
			was = vc.Append(was[:0], []V{b.Entries[i].Val})
			if now = vc.Append(now[:0], []V{e.Val}); string(was) == string(now) {
				continue
			}
		}
		d.Set = append(d.Set, e)
	}
	for _, e := range b.Entries {
		k := keyedKey[K]{e.H, e.Key}
		if _, ok := old[k]; ok {
			d.Gone = append(d.Gone, k)
		}
	}
	return dc.Append(nil, []keyedDelta[K, V]{d}), nil
}

// mergeBlob returns the blob that deltaBlob's delta was taken of, given
// the base it was taken on: the same entries (in another order) and
// watermark. A delta that removes a key the base does not hold was taken
// on another base, and is refused.
func mergeBlob[K comparable, V any](base, delta []byte) ([]byte, error) {
	bc, err := codec.For[keyedBlob[K, V]]()
	if err != nil {
		return nil, err
	}
	dc, err := codec.For[keyedDelta[K, V]]()
	if err != nil {
		return nil, err
	}
	b, err := decodeOne(bc, base, "checkpoint blob")
	if err != nil {
		return nil, err
	}
	d, err := decodeOne(dc, delta, "key group's delta")
	if err != nil {
		return nil, err
	}
	gone := make(map[keyedKey[K]]bool, len(d.Gone)+len(d.Set))
	for _, k := range d.Gone {
		gone[k] = true
	}
	for _, e := range d.Set {
		gone[keyedKey[K]{e.H, e.Key}] = false // replaced, not removed
	}
	out := keyedBlob[K, V]{WM: d.WM, Entries: make([]keyedEntry[K, V], 0, len(b.Entries)+len(d.Set))}
	removed := 0
	for _, e := range b.Entries {
		g, ok := gone[keyedKey[K]{e.H, e.Key}]
		if !ok {
			out.Entries = append(out.Entries, e)
		} else if g {
			removed++
		}
	}
	if removed != len(d.Gone) {
		return nil, fmt.Errorf("weir: a key group's delta removes %d keys, of which its base holds %d: it was taken on another base", len(d.Gone), removed)
	}
	out.Entries = append(out.Entries, d.Set...)
	return bc.Append(nil, []keyedBlob[K, V]{out}), nil
}

func (w *windowed[K, S, O]) DeltaKeyed(base, cur []byte) ([]byte, error) {
	return deltaBlob[K, window.Set[S]](base, cur)
}

func (w *windowed[K, S, O]) MergeKeyed(base, delta []byte) ([]byte, error) {
	return mergeBlob[K, window.Set[S]](base, delta)
}

func (t *pairTask[K, L, R, O]) DeltaKeyed(base, cur []byte) ([]byte, error) {
	return deltaBlob[K, sides[L, R]](base, cur)
}

func (t *pairTask[K, L, R, O]) MergeKeyed(base, delta []byte) ([]byte, error) {
	return mergeBlob[K, sides[L, R]](base, delta)
}

func (p *processState[K, S]) DeltaKeyed(base, cur []byte) ([]byte, error) {
	return deltaBlob[K, S](base, cur)
}

func (p *processState[K, S]) MergeKeyed(base, delta []byte) ([]byte, error) {
	return mergeBlob[K, S](base, delta)
}

func (o *ttlProcessOp[K, T, S, U]) DeltaKeyed(base, cur []byte) ([]byte, error) {
	return deltaBlob[K, procEntry[S]](base, cur)
}

func (o *ttlProcessOp[K, T, S, U]) MergeKeyed(base, delta []byte) ([]byte, error) {
	return mergeBlob[K, procEntry[S]](base, delta)
}

func (p *procCore[K, S, U]) DeltaKeyed(base, cur []byte) ([]byte, error) {
	return deltaBlob[K, procEntry[S]](base, cur)
}

func (p *procCore[K, S, U]) MergeKeyed(base, delta []byte) ([]byte, error) {
	return mergeBlob[K, procEntry[S]](base, delta)
}
