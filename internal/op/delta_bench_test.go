package op

import (
	"fmt"
	"hash/maphash"
	"maps"
	"testing"
)

// BenchmarkDeltaMerge takes and merges the delta of a key group of 28
// keys of 72 KiB (a quarter of them changed), as the rescale benchmark's
// ballast holds at 256 MB.
func BenchmarkDeltaMerge(b *testing.B) {
	type pad struct {
		Pad  []byte
		Seen int64
	}
	base := map[string]pad{}
	for i := range 28 {
		base[fmt.Sprint(i)] = pad{Pad: make([]byte, 72<<10), Seen: 1}
	}
	cur := maps.Clone(base)
	for i := range 7 {
		cur[fmt.Sprint(i)] = pad{Pad: base[fmt.Sprint(i)].Pad, Seen: 2}
	}
	enc := func(m map[string]pad) []byte {
		tab := newKeyedTable[string, pad]()
		for k, v := range m {
			*tab.Upsert(maphash.String(deltaSeed, k), k) = v
		}
		bl, err := snapshotTable[string, pad](tab, 0, "op", 1, nil)
		if err != nil {
			b.Fatal(err)
		}
		return bl[0].Data
	}
	bb, cb := enc(base), enc(cur)
	b.SetBytes(int64(len(cb)))
	for b.Loop() {
		d, err := deltaBlob[string, pad](bb, cb)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := mergeBlob[string, pad](bb, d); err != nil {
			b.Fatal(err)
		}
	}
}
