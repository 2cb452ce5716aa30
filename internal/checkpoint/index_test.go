package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// indexedPart is process's part of checkpoint n, whose blobs are key
// groups process, process+processes, ... of two operators, with sizes
// that differ (an empty one among them).
func indexedPart(n uint64, process, processes, blobs int) Part {
	p := Part{Checkpoint: n, Epoch: n, Process: process, Processes: processes, Meta: map[string]string{"key_groups": "64"}}
	for i := range blobs {
		kg := uint32(process + i*processes)
		d := bytes.Repeat([]byte{byte(n), byte(kg)}, i*7)
		p.State = append(p.State, StateBlob{Operator: fmt.Sprintf("op-%d", i%2), KeyGroup: kg, Data: d})
	}
	p.Sources = []SourceBlob{{Operator: "src", Instance: process, Data: []byte("pos")}}
	return p
}

// The index of a part says where each blob's data lies in it, with its
// checksum, and survives its own encoding.
func TestIndexPart(t *testing.T) {
	p := indexedPart(7, 1, 3, 6)
	b, x, err := IndexPart(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := mustEncode(t, p); !bytes.Equal(b, want) {
		t.Fatal("IndexPart encodes otherwise than EncodePart")
	}
	if x.Checkpoint != 7 || x.Process != 1 || x.PartSize != int64(len(b)) || x.PartCRC != trailerCRC(b) || len(x.Blobs) != len(p.State) {
		t.Fatalf("index %+v", x)
	}
	for i, l := range x.Blobs {
		s := p.State[i]
		if l.Operator != s.Operator || l.KeyGroup != s.KeyGroup || !bytes.Equal(b[l.Offset:l.Offset+l.Length], s.Data) ||
			l.CRC != crc32.Checksum(s.Data, castagnoli) {
			t.Errorf("blob %d: %+v does not locate %s/%d", i, l, s.Operator, s.KeyGroup)
		}
	}
	enc, err := EncodeIndex(x)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeIndex(enc)
	if err != nil || !reflect.DeepEqual(got, x) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for n := range len(enc) {
		if _, err := DecodeIndex(reseal(bytes.Clone(enc[:n]))); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("resealed prefix of %d bytes: %v", n, err)
		}
	}
	for bit := range 8 * len(enc) {
		d := bytes.Clone(enc)
		d[bit/8] ^= 1 << (bit % 8)
		if _, err := DecodeIndex(d); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip of bit %d: %v", bit, err)
		}
	}
}

func TestIndexRejects(t *testing.T) {
	good := PartIndex{Checkpoint: 1, Process: 0, PartSize: 100, Blobs: []BlobLoc{
		{Operator: "a", KeyGroup: 1, Offset: 10, Length: 5}, {Operator: "b", KeyGroup: 1, Offset: 20, Length: 76}}}
	if _, err := EncodeIndex(good); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(x *PartIndex){
		"overlap":      func(x *PartIndex) { x.Blobs[1].Offset = 12 },
		"past the end": func(x *PartIndex) { x.Blobs[1].Length = 77 },
		"in header":    func(x *PartIndex) { x.Blobs[0].Offset = 2 },
		"duplicate":    func(x *PartIndex) { x.Blobs[1].Operator = "a" },
		"tiny part":    func(x *PartIndex) { x.PartSize = 8; x.Blobs = nil },
	}
	for name, f := range bad {
		x := good
		x.Blobs = append([]BlobLoc(nil), good.Blobs...)
		f(&x)
		if _, err := EncodeIndex(x); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
	ib := func(fields ...[]byte) []byte {
		b := []byte(indexMagic + "\x01")
		for _, f := range fields {
			b = append(b, f...)
		}
		return seal(b)
	}
	crc := []byte{0, 0, 0, 0}
	cases := map[string]struct {
		in   []byte
		want string
	}{
		"part magic":   {mustEncode(t, Part{Processes: 1}), "bad magic"},
		"lying names":  {ib(uv(1), uv(0), uv(100), crc, uv(1<<30)), "name count: count 1073741824 exceeds"},
		"lying blobs":  {ib(uv(1), uv(0), uv(100), crc, uv(0), uv(1<<30)), "blob count: count 1073741824 exceeds"},
		"twice a name": {ib(uv(1), uv(0), uv(100), crc, uv(2), uv(1), []byte("a"), uv(1), []byte("a")), "comes twice"},
		"unused name":  {ib(uv(1), uv(0), uv(100), crc, uv(1), uv(1), []byte("a"), uv(0)), "0 of 1 names are used"},
		"name order": {ib(uv(1), uv(0), uv(100), crc, uv(2), uv(1), []byte("a"), uv(1), []byte("b"),
			uv(1), uv(1), uv(10), uv(1), crc, uv(0), uv(1), uv(20), uv(1), crc), "number 1, want at most 0"},
		"out of part": {ib(uv(1), uv(0), uv(100), crc, uv(1), uv(1), []byte("a"), uv(1), uv(0), uv(1), uv(10), uv(200), crc), "inside the part"},
		"short crc":   {ib(uv(1), uv(0), uv(100), []byte{1, 2}), "part crc: truncated"},
		"trailing":    {ib(uv(1), uv(0), uv(100), crc, uv(0), uv(0), []byte{9}), "1 bytes after"},
	}
	for name, c := range cases {
		_, err := DecodeIndex(c.in)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", name, err, c.want)
		}
	}
	lying := ib(uv(1), uv(0), uv(100), crc, uv(0), uv(1<<40))
	allocs := testing.AllocsPerRun(100, func() { _, _ = DecodeIndex(lying) })
	if allocs > 10 {
		t.Fatalf("%v allocations for a 1<<40 count", allocs)
	}
}

// ReadBlob reads one key group's blob of a complete checkpoint, whichever
// part holds it, and tells an absent blob, a checkpoint it cannot read and
// damaged bytes apart.
func TestReadBlob(t *testing.T) {
	forEachFS(t, func(t *testing.T, e *env) {
		const procs = 3
		write := func(n uint64) []Part {
			var parts []Part
			for i := range procs {
				p := indexedPart(n, i, procs, 6)
				if err := e.s.WritePart(p); err != nil {
					t.Fatal(err)
				}
				parts = append(parts, p)
			}
			return parts
		}
		parts := write(4)
		if _, _, err := e.s.ReadBlob(4, "op-0", 0); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("a blob of an incomplete checkpoint: %v", err)
		}
		if ok, err := e.s.Complete(4, procs); !ok || err != nil {
			t.Fatal(ok, err)
		}
		for _, p := range parts {
			for _, s := range p.State {
				got, ok, err := e.s.ReadBlob(4, s.Operator, s.KeyGroup)
				if err != nil || !ok || !bytes.Equal(got, s.Data) {
					t.Fatalf("%s/%d: %d bytes, %v, %v; want %d bytes", s.Operator, s.KeyGroup, len(got), ok, err, len(s.Data))
				}
			}
		}
		if _, ok, err := e.s.ReadBlob(4, "op-1", 0); ok || err != nil {
			t.Fatalf("a blob the checkpoint does not hold: %v, %v", ok, err)
		}
		// A flipped bit in a blob is found, though the index is cached.
		l := mustIndex(t, e, 4, 2).Blobs[3]
		if err := e.dmg.FlipBit(e.path(4, partName(2)), int(l.Offset)*8+3); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.s.ReadBlob(4, l.Operator, l.KeyGroup); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "checksum") {
			t.Fatalf("a damaged blob: %v", err)
		}
		// So is a part cut short, and an index that is not the part's.
		if err := e.dmg.Truncate(e.path(4, partName(2)), int(l.Offset)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.s.ReadBlob(4, l.Operator, l.KeyGroup); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("a truncated part: %v", err)
		}
		write(5)
		if ok, err := e.s.Complete(5, procs); !ok || err != nil {
			t.Fatal(ok, err)
		}
		stale, err := e.fs.ReadFile(e.path(4, indexName(1)))
		if err != nil {
			t.Fatal(err)
		}
		x, _ := DecodeIndex(stale)
		x.Checkpoint = 5
		stale, _ = EncodeIndex(x)
		replace(t, e, e.path(5, indexName(1)), stale)
		if _, _, err := e.s.ReadBlob(5, "op-0", 1); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "stale") {
			t.Fatalf("a stale index: %v", err)
		}
		if err := e.fs.Remove(e.path(5, indexName(1))); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.s.ReadBlob(5, "op-0", 1); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("a missing index: %v", err)
		}
		// A pruned checkpoint is gone, cached or not.
		for n := uint64(6); n <= 11; n++ {
			write(n)
			if ok, err := e.s.Complete(n, procs); !ok || err != nil {
				t.Fatal(ok, err)
			}
			if _, ok, err := e.s.ReadBlob(n, "op-1", uint32(procs)); !ok || err != nil {
				t.Fatal(n, ok, err)
			}
		}
		if len(e.s.indexes) > maxIndexes {
			t.Errorf("%d indexes cached", len(e.s.indexes))
		}
		if err := e.s.Prune(1); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.s.ReadBlob(10, "op-1", uint32(procs)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("a pruned checkpoint: %v", err)
		}
	})
}

func mustIndex(t *testing.T, e *env, n uint64, process int) PartIndex {
	t.Helper()
	b, err := e.fs.ReadFile(e.path(n, indexName(process)))
	if err != nil {
		t.Fatal(err)
	}
	x, err := DecodeIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// replace makes the file name hold data.
func replace(t *testing.T, e *env, name string, data []byte) {
	t.Helper()
	if err := e.s.writeAtomic(filepath.Dir(name), filepath.Base(name), data); err != nil {
		t.Fatal(err)
	}
}
