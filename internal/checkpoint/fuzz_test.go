package checkpoint

import (
	"bytes"
	"errors"
	"testing"
)

// Mutated inputs almost never carry a valid checksum, so each target also
// decodes the input with its checksum recomputed, to reach the field
// decoder.

func FuzzDecodePart(f *testing.F) {
	for _, p := range []Part{
		{Processes: 1},
		samplePart(42, 1, 3, 4, 5),
		{Checkpoint: 1 << 40, Epoch: 3, Process: 0, Processes: 2,
			State:   []StateBlob{{Operator: "a", KeyGroup: 1<<32 - 1, Data: []byte{0}}, {Operator: "a", KeyGroup: 2}},
			Sources: []SourceBlob{{Operator: "", Instance: 7, Data: []byte("pos")}},
			Meta:    map[string]string{"k": "v"}},
	} {
		f.Add(mustEncode(f, p))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, in := range [][]byte{b, reseal(bytes.Clone(b))} {
			p, err := DecodePart(in)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error does not wrap ErrCorrupt: %v", err)
				}
				continue
			}
			out, err := EncodePart(p)
			if err != nil {
				t.Fatalf("decoded part does not encode: %v", err)
			}
			if !bytes.Equal(in, out) {
				t.Fatalf("re-encoding differs:\n in %x\nout %x", in, out)
			}
		}
	})
}

func FuzzDecodeManifest(f *testing.F) {
	for _, m := range []Manifest{
		{Checkpoint: 1, Epoch: 1, Processes: 1, Parts: []ManifestPart{{Name: "part-0000.bin", Size: 10, CRC: 5}}},
		{Checkpoint: 1 << 50, Epoch: 2, Processes: 3, Parts: []ManifestPart{{}, {Name: "x", Size: 1 << 40, CRC: 1<<32 - 1}, {Name: "part-0002.bin"}}},
	} {
		b, err := EncodeManifest(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, in := range [][]byte{b, reseal(bytes.Clone(b))} {
			m, err := DecodeManifest(in)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error does not wrap ErrCorrupt: %v", err)
				}
				continue
			}
			out, err := EncodeManifest(m)
			if err != nil {
				t.Fatalf("decoded manifest does not encode: %v", err)
			}
			if !bytes.Equal(in, out) {
				t.Fatalf("re-encoding differs:\n in %x\nout %x", in, out)
			}
		}
	})
}

func FuzzDecodeIndex(f *testing.F) {
	for _, p := range []Part{{Processes: 1}, indexedPart(3, 1, 2, 5), samplePart(42, 1, 3, 4, 5)} {
		_, x, err := IndexPart(p)
		if err != nil {
			f.Fatal(err)
		}
		b, err := EncodeIndex(x)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, in := range [][]byte{b, reseal(bytes.Clone(b))} {
			x, err := DecodeIndex(in)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error does not wrap ErrCorrupt: %v", err)
				}
				continue
			}
			out, err := EncodeIndex(x)
			if err != nil {
				t.Fatalf("decoded index does not encode: %v", err)
			}
			if !bytes.Equal(in, out) {
				t.Fatalf("re-encoding differs:\n in %x\nout %x", in, out)
			}
		}
	})
}
