package op

import (
	"fmt"
	"hash/maphash"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/weirstream/weir/internal/codec"
	"github.com/weirstream/weir/internal/dataflow"
)

// Every keyed operator hands its key groups over as deltas too.
var (
	_ dataflow.DeltaMover = (*windowed[string, int64, int64])(nil)
	_ dataflow.DeltaMover = (*pairTask[string, int64, int64, int64])(nil)
	_ dataflow.DeltaMover = (*processState[string, int64])(nil)
	_ dataflow.DeltaMover = (*ttlProcessOp[string, int64, int64, int64])(nil)
	_ dataflow.DeltaMover = (*procCore[string, int64, int64])(nil)
)

type deltaVal struct {
	N    int64
	S    string
	Hist []int32
}

var deltaSeed = maphash.MakeSeed()

// blobOf is the one blob of a table of vals (one key group) at watermark wm.
func blobOf(t *testing.T, vals map[string]deltaVal, wm int64) []byte {
	t.Helper()
	tab := newKeyedTable[string, deltaVal]()
	for k, v := range vals {
		*tab.Upsert(maphash.String(deltaSeed, k), k) = v
	}
	blobs, err := snapshotTable[string, deltaVal](tab, wm, "op", 1, nil)
	if err != nil || len(blobs) > 1 {
		t.Fatal(blobs, err)
	}
	if len(blobs) == 0 {
		c, _ := codec.For[keyedBlob[string, deltaVal]]()
		return c.Append(nil, []keyedBlob[string, deltaVal]{{WM: wm}})
	}
	return blobs[0].Data
}

// valsOf decodes a blob into its map and watermark.
func valsOf(t *testing.T, b []byte) (map[string]deltaVal, int64) {
	t.Helper()
	tab := newKeyedTable[string, deltaVal]()
	wm, err := restoreTable[string, deltaVal](tab, [][]byte{b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]deltaVal{}
	n := 0
	tab.Range(func(h uint64, k string, v *deltaVal) bool {
		if h != maphash.String(deltaSeed, k) {
			t.Fatalf("key %q with hash %x", k, h)
		}
		out[k] = *v
		n++
		return true
	})
	if n != len(out) {
		t.Fatalf("%d entries for %d keys", n, len(out))
	}
	return out, wm
}

func randVal(r *rand.Rand) deltaVal {
	v := deltaVal{N: r.Int64N(4), S: fmt.Sprint(r.IntN(3))}
	for range r.IntN(3) {
		v.Hist = append(v.Hist, int32(r.IntN(2)))
	}
	return v
}

// merge(base, delta(base, cur)) has cur's entries and watermark, for
// random tables and random changes: values changed (or set to what they
// were), keys added and removed, tables emptied and filled.
func TestDeltaMergeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		base := map[string]deltaVal{}
		for range r.IntN(60) {
			base[fmt.Sprintf("k%d", r.IntN(80))] = randVal(r)
		}
		cur := maps.Clone(base)
		switch trial % 5 {
		case 0: // emptied
			clear(cur)
		case 1: // unchanged
		default:
			for range r.IntN(40) {
				k := fmt.Sprintf("k%d", r.IntN(100))
				if r.IntN(3) == 0 {
					delete(cur, k)
				} else {
					cur[k] = randVal(r)
				}
			}
		}
		bb, cb := blobOf(t, base, int64(trial)), blobOf(t, cur, int64(trial)+7)
		d, err := deltaBlob[string, deltaVal](bb, cb)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mergeBlob[string, deltaVal](bb, d)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		got, wm := valsOf(t, m)
		if wm != int64(trial)+7 || len(got) != len(cur) {
			t.Fatalf("trial %d: %d keys at watermark %d; want %d at %d", trial, len(got), wm, len(cur), trial+7)
		}
		for k, v := range cur {
			if g, ok := got[k]; !ok || fmt.Sprint(g) != fmt.Sprint(v) {
				t.Fatalf("trial %d: key %s is %v, %v; want %v", trial, k, g, ok, v)
			}
		}
	}
}

// A delta holds what changed, so a table with few changes moves little of
// itself; a delta taken on one base does not merge into another that
// lacks the keys it removes.
func TestDeltaOfColdState(t *testing.T) {
	base := map[string]deltaVal{}
	for i := range 2000 {
		base[fmt.Sprintf("key-%d", i)] = deltaVal{N: int64(i), S: "a fairly long value that stays as it was"}
	}
	cur := maps.Clone(base)
	cur["key-7"] = deltaVal{N: -1}
	delete(cur, "key-8")
	cur["new"] = deltaVal{N: 1}
	bb, cb := blobOf(t, base, 0), blobOf(t, cur, 0)
	d, err := deltaBlob[string, deltaVal](bb, cb)
	if err != nil {
		t.Fatal(err)
	}
	dc, _ := codec.For[keyedDelta[string, deltaVal]]()
	ds, err := dc.Decode(d, nil)
	if err != nil || len(ds) != 1 || len(ds[0].Set) != 2 || len(ds[0].Gone) != 1 || ds[0].Gone[0].Key != "key-8" {
		t.Fatalf("delta %+v, %v; want key-7 and new set, key-8 gone", ds, err)
	}
	if len(d)*100 > len(cb) {
		t.Errorf("a delta of 3 keys in 2000 takes %d bytes of the whole %d", len(d), len(cb))
	}
	other := maps.Clone(base)
	delete(other, "key-8")
	if _, err := mergeBlob[string, deltaVal](blobOf(t, other, 0), d); err == nil {
		t.Error("a delta merged into a base that lacks the key it removes")
	}
	if _, err := mergeBlob[string, deltaVal](bb, d[:len(d)-1]); err == nil {
		t.Error("a delta cut short merged")
	}
	if _, err := deltaBlob[string, deltaVal](bb[:len(bb)/2], cb); err == nil {
		t.Error("a delta on a base cut short")
	}
}
