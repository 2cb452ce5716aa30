package op

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/state"
)

// Every keyed operator whose state is one table snapshots it lazily.
var (
	_ dataflow.LazyKeyedSnapshotter = (*windowed[string, int64, int64])(nil)
	_ dataflow.LazyKeyedSnapshotter = (*pairTask[string, int64, int64, int64])(nil)
	_ dataflow.LazyKeyedSnapshotter = (*processState[string, int64])(nil)
	_ dataflow.LazyKeyedSnapshotter = (*ttlProcessOp[string, int64, int64, int64])(nil)
	_ dataflow.LazyKeyedSnapshotter = (*procCore[string, int64, int64])(nil)
)

// lazyVal points to memory that the operator changes in place.
type lazyVal struct {
	N    int64
	Hist []int32
}

// decodeSnapshot returns what blobs hold, by key, checking that each key
// group comes once.
func decodeSnapshot(t *testing.T, blobs []checkpoint.StateBlob) map[string]lazyVal {
	t.Helper()
	got := map[string]lazyVal{}
	seen := map[uint32]bool{}
	for _, b := range blobs {
		if seen[b.KeyGroup] {
			t.Fatalf("key group %d saved twice", b.KeyGroup)
		}
		seen[b.KeyGroup] = true
		tb := state.NewTable[string, lazyVal](0)
		if _, err := restoreTable[string, lazyVal](tb, [][]byte{b.Data}, nil); err != nil {
			t.Fatal(err)
		}
		tb.Peek(func(_ uint64, k string, v *lazyVal) bool {
			got[k] = lazyVal{N: v.N, Hist: slices.Clone(v.Hist)}
			return true
		})
	}
	return got
}

// TestLazySnapshot: a lazy snapshot saves the table as it was when it
// began, whatever the operator does to it afterwards through the table
// (changing values in place, deleting, inserting, scanning), in any
// order with the steps that encode it; and it equals snapshotTable's.
func TestLazySnapshot(t *testing.T) {
	const groups = 16
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			tb := state.NewTable[string, lazyVal](0)
			hash := func(k string) uint64 {
				return uint64(len(k))*0x9e3779b97f4a7c15 ^ uint64(k[0])<<40 ^ uint64(k[len(k)-1])
			}
			key := func() string { return fmt.Sprintf("k%d", rng.IntN(200)) }
			for range 300 {
				k := key()
				v := tb.Upsert(hash(k), k)
				v.N++
				v.Hist = append(v.Hist, int32(rng.IntN(100)))
			}
			want := map[string]lazyVal{}
			tb.Peek(func(_ uint64, k string, v *lazyVal) bool {
				want[k] = lazyVal{N: v.N, Hist: slices.Clone(v.Hist)}
				return true
			})
			sync, err := snapshotTable[string, lazyVal](tb, 5, "op", groups, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := decodeSnapshot(t, sync); !equalVals(got, want) {
				t.Fatal("snapshotTable does not hold the table")
			}
			p, err := beginSnapshot[string, lazyVal](tb, 5, "op", groups)
			if err != nil || p == nil {
				t.Fatal(p, err)
			}
			p.(*lazySnapshot[string, lazyVal]).budget = 1 // a key group per Step
			for range 400 {
				k := key()
				switch rng.IntN(6) {
				case 0, 1: // in place: the slice's memory changes
					if v := tb.Get(hash(k), k); v != nil && len(v.Hist) > 0 {
						v.Hist[0] = -1
						v.N = -1
					}
				case 2:
					v := tb.Upsert(hash(k), k)
					v.Hist = append(v.Hist[:0], -2)
				case 3:
					tb.Delete(hash(k), k)
				case 4:
					tb.DeleteFunc(func(k2 string, v *lazyVal) bool {
						if len(v.Hist) > 1 {
							v.Hist[1] = -3
						}
						return k2 == k
					})
				case 5:
					p.Step()
				}
			}
			got := decodeSnapshot(t, p.Finish(nil))
			if !equalVals(got, want) {
				t.Fatalf("the lazy snapshot differs from the table at its start: %d keys, want %d", len(got), len(want))
			}
			tb.Upsert(hash("x"), "x") // no watch is left behind
		})
	}
}

func equalVals(a, b map[string]lazyVal) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.N != w.N || !slices.Equal(v.Hist, w.Hist) {
			return false
		}
	}
	return true
}

// TestLazySnapshotNotMemory: a store in a backend is not snapshotted
// lazily.
func TestLazySnapshotNotMemory(t *testing.T) {
	var s keyedStore[string, lazyVal] = &diskStore[string, lazyVal]{}
	if p, err := beginSnapshot(s, 0, "op", 4); p != nil || err != nil {
		t.Fatalf("beginSnapshot of a disk store = %v, %v; want nil, nil", p, err)
	}
}
