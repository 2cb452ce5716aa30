package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// samplePart returns a part with blobs blobs of size bytes each, spread
// over three operators, plus sources and meta.
func samplePart(n uint64, process, processes, blobs, size int) Part {
	r := rand.New(rand.NewPCG(n, uint64(process)))
	p := Part{Checkpoint: n, Epoch: n, Process: process, Processes: processes,
		Meta: map[string]string{"job": "fp-1234", "workers": "4", "": "empty key"}}
	for i := range blobs {
		d := make([]byte, size)
		for j := range d {
			d[j] = byte(r.Uint32())
		}
		p.State = append(p.State, StateBlob{Operator: fmt.Sprintf("op-%d", i%3), KeyGroup: uint32(i), Data: d})
	}
	for i := range 3 {
		p.Sources = append(p.Sources, SourceBlob{Operator: "kafka", Instance: i, Data: []byte(fmt.Sprintf("offset=%d", i*100))})
	}
	return p
}

// normalize makes empty slices and maps nil, as the decoder returns them.
func normalize(p Part) Part {
	if len(p.State) == 0 {
		p.State = nil
	}
	if len(p.Sources) == 0 {
		p.Sources = nil
	}
	if len(p.Meta) == 0 {
		p.Meta = nil
	}
	for i := range p.State {
		if len(p.State[i].Data) == 0 {
			p.State[i].Data = nil
		}
	}
	for i := range p.Sources {
		if len(p.Sources[i].Data) == 0 {
			p.Sources[i].Data = nil
		}
	}
	return p
}

func TestPartRoundTrip(t *testing.T) {
	big := make([]byte, 16<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	cases := map[string]Part{
		"empty": {Checkpoint: 0, Process: 0, Processes: 1},
		"empty-non-nil": {Checkpoint: 9, Epoch: 9, Process: 1, Processes: 2,
			State: []StateBlob{}, Sources: []SourceBlob{}, Meta: map[string]string{}},
		"empty-blobs": {Processes: 1, State: []StateBlob{{Operator: "", Data: []byte{}}, {Operator: "a", KeyGroup: 1}},
			Sources: []SourceBlob{{Operator: "", Instance: 0}}},
		"many":  samplePart(42, 3, 4, 5000, 17),
		"big":   {Checkpoint: 1 << 40, Epoch: 1<<64 - 1, Process: 2, Processes: 3, State: []StateBlob{{Operator: "agg", KeyGroup: 1<<32 - 1, Data: big}}},
		"huge#": {Checkpoint: 7, Process: 999, Processes: 1000},
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := EncodePart(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodePart(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, normalize(p)) {
				t.Fatalf("round trip differs")
			}
			b2, err := EncodePart(got)
			if err != nil || !bytes.Equal(b, b2) {
				t.Fatalf("re-encoding differs (err %v)", err)
			}
		})
	}
}

func TestDecodedBlobsDoNotOverlap(t *testing.T) {
	b, _ := EncodePart(samplePart(1, 0, 1, 3, 4))
	p, err := DecodePart(b)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte(nil), p.State[1].Data...)
	p.State[0].Data = append(p.State[0].Data, 0xFF, 0xFF, 0xFF)
	if !bytes.Equal(p.State[1].Data, want) {
		t.Fatal("appending to one blob overwrote the next")
	}
}

func TestEncodePartRejects(t *testing.T) {
	cases := map[string]Part{
		"no processes":      {Processes: 0},
		"process too big":   {Process: 2, Processes: 2},
		"negative process":  {Process: -1, Processes: 2},
		"duplicate state":   {Processes: 1, State: []StateBlob{{Operator: "a", KeyGroup: 1}, {Operator: "a", KeyGroup: 1}}},
		"negative instance": {Processes: 1, Sources: []SourceBlob{{Operator: "s", Instance: -1}}},
		"duplicate source":  {Processes: 1, Sources: []SourceBlob{{Operator: "s"}, {Operator: "s"}}},
	}
	for name, p := range cases {
		if _, err := EncodePart(p); err == nil || !strings.HasPrefix(err.Error(), "checkpoint: ") {
			t.Errorf("%s: err = %v, want a checkpoint: error", name, err)
		}
	}
	if _, err := EncodeManifest(Manifest{Processes: 2, Parts: make([]ManifestPart, 1)}); err == nil {
		t.Error("manifest with too few parts encoded")
	}
	if _, err := EncodeManifest(Manifest{Processes: 1, Parts: []ManifestPart{{Size: -1}}}); err == nil {
		t.Error("manifest with negative size encoded")
	}
}

// reseal recomputes the trailing checksum of b in place, so that tests and
// fuzzing reach the field decoder with damaged bodies.
func reseal(b []byte) []byte {
	if len(b) >= headerLen+trailerLen {
		end := len(b) - trailerLen
		binary.LittleEndian.PutUint32(b[end:], crcOf(b[:end]))
	}
	return b
}

func crcOf(b []byte) uint32 { return trailerCRC(seal(append([]byte(nil), b...))) }

// body builds a sealed part from a raw body after the header.
func body(fields ...[]byte) []byte {
	b := []byte(partMagic + "\x01")
	for _, f := range fields {
		b = append(b, f...)
	}
	return seal(b)
}

func uv(x uint64) []byte { return binary.AppendUvarint(nil, x) }

func TestDecodePartErrors(t *testing.T) {
	good, _ := EncodePart(samplePart(5, 1, 2, 3, 8))
	flipMagic := bytes.Clone(good)
	flipMagic[0] ^= 1
	badVersion := reseal(bytes.Clone(good))
	badVersion[4] = 2
	badSum := bytes.Clone(good)
	badSum[len(badSum)-1] ^= 0x80
	hdr := [][]byte{uv(1), uv(1), uv(0), uv(1)}
	with := func(rest ...[]byte) []byte { return body(append(append([][]byte(nil), hdr...), rest...)...) }
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"short", good[:8], "truncated: 8 bytes"},
		{"magic", flipMagic, "bad magic"},
		{"manifest magic", seal([]byte(manifestMagic + "\x01")), "bad magic"},
		{"version", badVersion, "unsupported part format version 2"},
		{"checksum", badSum, "checksum mismatch"},
		{"truncated", good[:len(good)-3], "checksum mismatch"},
		{"lying count", with(uv(1 << 40)), "state blob count: count 1099511627776 exceeds"},
		{"lying length", with(uv(1), uv(1<<50), []byte("op"), uv(0), uv(0)), "state blob 0: operator: length 1125899906842624 exceeds"},
		{"lying data", with(uv(1), uv(1), []byte("o"), uv(3), uv(100), []byte("xy"), uv(0), uv(0)), "state blob 0: data: length 100 exceeds the remaining 4 bytes"},
		{"key group", with(uv(1), uv(0), uv(1<<32), uv(0), uv(0), uv(0)), "key group: 4294967296 does not fit"},
		{"non-minimal", body([]byte{0x81, 0x00}), "checkpoint: non-minimal varint"},
		{"overflow", body(bytes.Repeat([]byte{0xFF}, 11)), "overflows 64 bits"},
		{"cut varint", body([]byte{0x81}), "truncated varint"},
		{"trailing", with(uv(0), uv(0), uv(0), []byte{0}), "1 bytes after the last field"},
		{"meta order", with(uv(0), uv(0), uv(2), uv(1), []byte("b"), uv(0), uv(1), []byte("a"), uv(0)), `meta entry 1: key: "a" does not sort after "b"`},
		{"process range", body(uv(1), uv(1), uv(3), uv(2), uv(0), uv(0), uv(0)), "process 3 out of range [0, 2)"},
		{"duplicate", with(uv(2), uv(1), []byte("a"), uv(1), uv(0), uv(1), []byte("a"), uv(1), uv(0), uv(0), uv(0)), "duplicate operator"},
	}
	for _, c := range cases {
		_, err := DecodePart(c.in)
		if err == nil {
			t.Errorf("%s: decoded", c.name)
			continue
		}
		if !errors.Is(err, ErrCorrupt) || !strings.HasPrefix(err.Error(), "checkpoint: corrupt") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestDecodeEveryPrefix(t *testing.T) {
	good, _ := EncodePart(samplePart(5, 1, 2, 4, 8))
	for n := range len(good) {
		if _, err := DecodePart(good[:n]); err == nil {
			t.Fatalf("prefix of %d bytes decoded", n)
		}
		if _, err := DecodePart(reseal(bytes.Clone(good[:n]))); err == nil {
			t.Fatalf("resealed prefix of %d bytes decoded", n)
		}
	}
}

func TestEveryBitFlipDetected(t *testing.T) {
	part, _ := EncodePart(samplePart(5, 1, 2, 4, 8))
	man, _ := EncodeManifest(Manifest{Checkpoint: 5, Epoch: 5, Processes: 2,
		Parts: []ManifestPart{{"part-0000.bin", 100, 0xdeadbeef}, {"part-0001.bin", 200, 7}}})
	for _, f := range []struct {
		b      []byte
		decode func([]byte) error
	}{
		{part, func(b []byte) error { _, err := DecodePart(b); return err }},
		{man, func(b []byte) error { _, err := DecodeManifest(b); return err }},
	} {
		if err := f.decode(f.b); err != nil {
			t.Fatal(err)
		}
		for bit := range 8 * len(f.b) {
			b := bytes.Clone(f.b)
			b[bit/8] ^= 1 << (bit % 8)
			if err := f.decode(b); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("flip of bit %d of %q...: err = %v", bit, f.b[:4], err)
			}
		}
	}
}

func TestManifestRoundTripAndErrors(t *testing.T) {
	m := Manifest{Checkpoint: 42, Epoch: 43, Processes: 3, Parts: []ManifestPart{
		{"part-0000.bin", 0, 0}, {"part-0001.bin", 1 << 40, 0xFFFFFFFF}, {"part-0002.bin", 12, 5}}}
	b, err := EncodeManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeManifest(b)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	mb := func(fields ...[]byte) []byte {
		b := []byte(manifestMagic + "\x01")
		for _, f := range fields {
			b = append(b, f...)
		}
		return seal(b)
	}
	cases := map[string]struct {
		in   []byte
		want string
	}{
		"part magic":  {mustEncode(t, Part{Processes: 1}), "bad magic"},
		"no parts":    {mb(uv(1), uv(1), uv(0)), "processes: is 0"},
		"lying count": {mb(uv(1), uv(1), uv(1<<30)), "processes: count 1073741824 exceeds"},
		"short crc":   {mb(uv(1), uv(1), uv(1), uv(1), []byte("a"), uv(1), []byte{1, 2, 3}), "crc: truncated"},
		"trailing":    {mb(uv(1), uv(1), uv(1), uv(0), uv(0), []byte{1, 2, 3, 4, 5}), "1 bytes after"},
		"huge size":   {mb(uv(1), uv(1), uv(1), uv(0), uv(1<<63), []byte{1, 2, 3, 4}), "does not fit an int64"},
		"truncated":   {b[:len(b)-1], "checksum mismatch"},
	}
	for name, c := range cases {
		_, err := DecodeManifest(c.in)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", name, err, c.want)
		}
	}
}

func mustEncode(t testing.TB, p Part) []byte {
	t.Helper()
	b, err := EncodePart(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLyingCountsDoNotAllocate(t *testing.T) {
	in := body(uv(1), uv(1), uv(0), uv(1), uv(1<<40))
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := DecodePart(in); err == nil {
			t.Fatal("decoded")
		}
	})
	if allocs > 10 {
		t.Fatalf("%v allocations for a 1<<40 count", allocs)
	}
}
