package weir

import (
	"slices"
	"testing"

	"github.com/weirstream/weir/internal/progress"
)

type wireRec struct {
	A string
	B int64
	C []byte
}

func wireSeeds(t testing.TB) (bw, bs *batchWire[wireRec], kw *keyedWire[string, wireRec, int64], seeds [][]byte) {
	bw, err := newBatchWire[wireRec](8, true)
	if err != nil {
		t.Fatal(err)
	}
	bs, _ = newBatchWire[wireRec](8, false)
	kw, err = newKeyedWire[string, wireRec, int64](true)
	if err != nil {
		t.Fatal(err)
	}
	b := &batch[wireRec]{v: []wireRec{{"x", 1, []byte("yy")}, {"", -5, nil}}, ts: []int64{3, 4}, seq: []uint64{7, 9}, unit: 3}
	e1, _ := bw.encode(nil, b)
	e2, _ := bs.encode(nil, &batch[wireRec]{v: []wireRec{{"a", 2, nil}}})
	e3, _ := kw.encode(nil, &kbatch[string, wireRec]{recs: []krec[string, wireRec]{{h: 1, ts: 2, k: "k", v: wireRec{"v", 1, nil}}}})
	e4, _ := kw.encode(nil, &pbatch[string, int64]{recs: []partial[string, int64]{{h: 1, k: "k", start: 0, end: 10, acc: 5}}})
	e5 := appendMarker(nil, progress.Marker{Epoch: 3, Watermark: 5, Cut: 6, Final: true})
	return bw, bs, kw, [][]byte{e1, e2, e3, e4, e5}
}

// Messages round-trip through their wires.
func TestWireRoundTrip(t *testing.T) {
	bw, bs, kw, seeds := wireSeeds(t)
	m, err := bw.decode(seeds[0])
	if b := m.(*batch[wireRec]); err != nil || b.unit != 3 || !slices.Equal(b.ts, []int64{3, 4}) || !slices.Equal(b.seq, []uint64{7, 9}) || b.v[0].A != "x" || string(b.v[0].C) != "yy" {
		t.Errorf("batch: %+v, %v", m, err)
	}
	if _, err := bs.decode(seeds[0]); err == nil {
		t.Error("an untimed wire accepted a batch with event times")
	}
	if _, err := bw.decode(seeds[1]); err == nil {
		t.Error("a timed wire accepted a batch without event times")
	}
	if m, err := kw.decode(seeds[2]); err != nil || m.(*kbatch[string, wireRec]).recs[0].k != "k" {
		t.Errorf("keyed: %+v, %v", m, err)
	}
	if m, err := kw.decode(seeds[3]); err != nil || m.(*pbatch[string, int64]).recs[0].acc != 5 {
		t.Errorf("partial: %+v, %v", m, err)
	}
	if m, err := decodeMarker(&reader{b: seeds[4][1:]}); err != nil || !m.Final || m.Epoch != 3 {
		t.Errorf("marker: %+v, %v", m, err)
	}
	for _, s := range seeds {
		for n := 1; n < len(s); n++ {
			var err error
			switch s[0] {
			case tagMarker:
				_, err = decodeMarker(&reader{b: s[1:n]})
			case tagBatch:
				_, err = bw.decode(s[:n])
			default:
				_, err = kw.decode(s[:n])
			}
			if err == nil {
				t.Errorf("truncated message %x decoded", s[:n])
			}
		}
	}
}

// What another process sends is decoded without panics, whatever it is.
func FuzzWireDecode(f *testing.F) {
	bw, bs, kw, seeds := wireSeeds(f)
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, buf []byte) {
		if len(buf) == 0 {
			return
		}
		if buf[0] == tagMarker {
			decodeMarker(&reader{b: buf[1:]})
			return
		}
		if m, err := bw.decode(buf); err == nil {
			if b := m.(*batch[wireRec]); len(b.ts) != len(b.v) {
				t.Fatalf("timed batch with %d records and %d times", len(b.v), len(b.ts))
			}
		}
		bs.decode(buf)
		kw.decode(buf)
	})
}
