package trace

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func randomEvents(r *rand.Rand, n, workers, ops int, base int64) []Event {
	out := make([]Event, n)
	at := base
	for i := range out {
		at += int64(r.IntN(1000)) - 100
		e := Event{Worker: uint32(r.IntN(workers)), Kind: Kind(r.IntN(int(numKinds))), Op: uint16(r.IntN(ops)), Start: at, End: at + int64(r.IntN(5000))}
		if e.Kind == Send || e.Kind == Recv {
			e.Channel, e.Seq = r.Uint64N(1<<40), r.Uint64()
		}
		out[i] = e
	}
	return out
}

// write encodes a trace in blocks as the engine does: tables grow between
// blocks.
func write(t *testing.T, tr *Trace, blocks int) []byte {
	var b bytes.Buffer
	w := NewWriter(&b, tr.Process, tr.Processes, tr.Base)
	per := len(tr.Events)/blocks + 1
	for i := 0; i < len(tr.Events); i += per {
		ev := tr.Events[i:min(i+per, len(tr.Events))]
		nw, no := 0, 0
		for _, e := range ev {
			nw, no = max(nw, int(e.Worker)+1), max(no, int(e.Op)+1)
		}
		for _, wk := range tr.Workers[:nw] {
			no = max(no, int(wk.Op)+1)
		}
		if err := w.Write(tr.Workers[:max(nw, w.nw)], tr.Ops[:max(no, w.no)], ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(tr.Workers, tr.Ops, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func sample(r *rand.Rand) *Trace {
	tr := &Trace{Process: 1, Processes: 3, Base: 1_700_000_000_000_000_000, Ops: []string{"source", "map→filter", "sink"}}
	for i := range 5 {
		tr.Workers = append(tr.Workers, Worker{Name: tr.Ops[i%3], Process: 1, Instance: i, Op: uint16(i % 3)})
	}
	tr.Events = randomEvents(r, 3000, 5, 3, tr.Base)
	return tr
}

func TestRoundTrip(t *testing.T) {
	tr := sample(rand.New(rand.NewPCG(3, 4)))
	data := write(t, tr, 7)
	got, err := Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, tr) {
		t.Fatalf("decoded trace differs: %d events, want %d", len(got.Events), len(tr.Events))
	}
	if per := float64(len(data)) / float64(len(tr.Events)); per > 16 {
		t.Errorf("%.1f bytes per event: the format should be compact", per)
	}
}

func TestDecodeErrors(t *testing.T) {
	tr := sample(rand.New(rand.NewPCG(5, 6)))
	data := write(t, tr, 4)
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.trace")
	os.WriteFile(cut, data[:len(data)*2/3], 0o644)
	got, err := ReadFile(cut)
	if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), cut) || !strings.Contains(err.Error(), "offset ") {
		t.Fatalf("cut file: %v", err)
	}
	if len(got.Events) == 0 || len(got.Events) >= len(tr.Events) || !reflect.DeepEqual(got.Events, tr.Events[:len(got.Events)]) {
		t.Errorf("cut file: %d whole events of %d, or not the first ones", len(got.Events), len(tr.Events))
	}
	bad := bytes.Clone(data)
	bad[len(bad)/2] ^= 0x55
	if _, err := Decode(bytes.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("flipped byte: %v", err)
	}
	for _, c := range []struct{ data, want string }{
		{"", "empty file"}, {"NOTATRACE", "bad magic"}, {magic + "\x09", "version 9"},
		{magic + "\x01\x05\x02\x00", "process 5 of 2"}, {string(data) + "x", "after the end mark"},
	} {
		if _, err := Decode(strings.NewReader(c.data)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.data, err, c.want)
		}
	}
}

func TestMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	a := &Trace{Process: 0, Processes: 2, Base: 100, Ops: []string{"src", "sink"},
		Workers: []Worker{{Name: "src", Op: 0}, {Name: "sink", Op: 1}}}
	a.Events = randomEvents(r, 50, 2, 2, 100)
	b := &Trace{Process: 1, Processes: 2, Base: 50, Ops: []string{"sink", "src"},
		Workers: []Worker{{Name: "sink", Process: 1, Op: 0}, {Name: "src", Process: 1, Op: 1}}}
	b.Events = randomEvents(r, 50, 2, 2, 50)
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Workers) != 4 || len(m.Ops) != 2 || len(m.Events) != 100 || m.Base != 50 {
		t.Fatalf("merged %d workers, %d ops, %d events, base %d", len(m.Workers), len(m.Ops), len(m.Events), m.Base)
	}
	for i, e := range m.Events {
		src := a
		orig := e
		if i >= 50 {
			src, orig = b, b.Events[i-50]
		} else {
			orig = a.Events[i]
		}
		w := m.Workers[e.Worker]
		if w.Process != src.Process || w.Name != src.Workers[orig.Worker].Name || m.Ops[e.Op] != src.Ops[orig.Op] || m.Ops[w.Op] != w.Name {
			t.Fatalf("event %d: %+v is not %+v of process %d", i, e, orig, src.Process)
		}
	}
	if _, err := Merge(a, a); err == nil {
		t.Error("merged two traces of one process")
	}
}

func FuzzDecode(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 10))
	tr := sample(r)
	tr.Events = tr.Events[:40]
	var b bytes.Buffer
	w := NewWriter(&b, tr.Process, tr.Processes, tr.Base)
	w.Write(tr.Workers, tr.Ops, tr.Events)
	w.Close()
	f.Add(b.Bytes())
	f.Add(b.Bytes()[:b.Len()/2])
	f.Add([]byte(magic + "\x01\x00\x01\x00Z\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Decode(bytes.NewReader(data))
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Offset < 0 || fe.Offset > int64(len(data)) {
				t.Fatalf("error %v: not a FormatError with an offset in the data", err)
			}
			return
		}
		// What decodes re-encodes to a trace that decodes the same.
		var b bytes.Buffer
		w := NewWriter(&b, got.Process, got.Processes, got.Base)
		if err := w.Write(got.Workers, got.Ops, got.Events); err != nil {
			t.Fatal(err)
		}
		w.Close()
		again, err := Decode(&b)
		if err != nil {
			t.Fatalf("re-encoded trace: %v", err)
		}
		if !reflect.DeepEqual(again, got) && !(len(again.Events) == 0 && len(got.Events) == 0) {
			t.Fatalf("re-encoded trace differs")
		}
	})
}
