package exchange

import (
	"slices"
	"testing"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/progress"
)

type wireRec struct {
	A string
	B int64
	C []byte
}

func wireSeeds(t testing.TB) (bw, bs *batchWire[wireRec], kw *keyedWire[string, wireRec, int64], seeds [][]byte) {
	bw, err := NewBatchWire[wireRec](8, true)
	if err != nil {
		t.Fatal(err)
	}
	bs, _ = NewBatchWire[wireRec](8, false)
	kw, err = NewKeyedWire[string, wireRec, int64](true)
	if err != nil {
		t.Fatal(err)
	}
	b := &dataflow.Batch[wireRec]{V: []wireRec{{"x", 1, []byte("yy")}, {"", -5, nil}}, Ts: []int64{3, 4}, Seq: []uint64{7, 9}, Unit: 3}
	e1, _ := bw.Encode(nil, b)
	e2, _ := bs.Encode(nil, &dataflow.Batch[wireRec]{V: []wireRec{{"a", 2, nil}}})
	e3, _ := kw.Encode(nil, &dataflow.Kbatch[string, wireRec]{Recs: []dataflow.Krec[string, wireRec]{{H: 1, Ts: 2, K: "k", V: wireRec{"v", 1, nil}}}})
	e4, _ := kw.Encode(nil, &Pbatch[string, int64]{Recs: []Partial[string, int64]{{H: 1, K: "k", Start: 0, End: 10, Acc: 5}}})
	e5 := appendMarker(nil, progress.Marker{Epoch: 3, Watermark: 5, Cut: 6, Final: true})
	return bw, bs, kw, [][]byte{e1, e2, e3, e4, e5}
}

// Messages round-trip through their wires.
func TestWireRoundTrip(t *testing.T) {
	bw, bs, kw, seeds := wireSeeds(t)
	m, err := bw.Decode(seeds[0])
	if b := m.(*dataflow.Batch[wireRec]); err != nil || b.Unit != 3 || !slices.Equal(b.Ts, []int64{3, 4}) || !slices.Equal(b.Seq, []uint64{7, 9}) || b.V[0].A != "x" || string(b.V[0].C) != "yy" {
		t.Errorf("batch: %+v, %v", m, err)
	}
	if _, err := bs.Decode(seeds[0]); err == nil {
		t.Error("an untimed wire accepted a batch with event times")
	}
	if _, err := bw.Decode(seeds[1]); err == nil {
		t.Error("a timed wire accepted a batch without event times")
	}
	if m, err := kw.Decode(seeds[2]); err != nil || m.(*dataflow.Kbatch[string, wireRec]).Recs[0].K != "k" {
		t.Errorf("keyed: %+v, %v", m, err)
	}
	if m, err := kw.Decode(seeds[3]); err != nil || m.(*Pbatch[string, int64]).Recs[0].Acc != 5 {
		t.Errorf("partial: %+v, %v", m, err)
	}
	if m, err := decodeMarker(&Reader{B: seeds[4][1:]}); err != nil || !m.Final || m.Epoch != 3 {
		t.Errorf("marker: %+v, %v", m, err)
	}
	for _, s := range seeds {
		for n := 1; n < len(s); n++ {
			var err error
			switch s[0] {
			case tagMarker:
				_, err = decodeMarker(&Reader{B: s[1:n]})
			case tagBatch:
				_, err = bw.Decode(s[:n])
			default:
				_, err = kw.Decode(s[:n])
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
			decodeMarker(&Reader{B: buf[1:]})
			return
		}
		if m, err := bw.Decode(buf); err == nil {
			if b := m.(*dataflow.Batch[wireRec]); len(b.Ts) != len(b.V) {
				t.Fatalf("timed batch with %d records and %d times", len(b.V), len(b.Ts))
			}
		}
		bs.Decode(buf)
		kw.Decode(buf)
	})
}
