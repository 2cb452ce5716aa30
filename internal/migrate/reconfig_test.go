package migrate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/partition"
)

func samples(t testing.TB) []Reconfig {
	wide := make([]int, 300)
	for kg := range wide {
		wide[kg] = (kg * 7919) % 65536
	}
	return []Reconfig{
		{Operator: "count", Table: table(t, 7, 4, []int{0, 1, 2, 3, 3, 2})},
		{Operator: "", Table: table(t, 0, 1, []int{0})},
		{Operator: "auctions by seller", Table: table(t, 1<<40, 256, []int{255, 0, 128})},
		{Operator: "wide", Table: table(t, 3, 65536, wide)},
	}
}

func mustEncode(t testing.TB, r Reconfig) []byte {
	b, err := Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func same(a, b Reconfig) bool {
	return a.Operator == b.Operator && a.Table.From == b.Table.From &&
		a.Table.Instances() == b.Table.Instances() && slices.Equal(owners(a.Table), owners(b.Table))
}

func TestReconfigRoundTrip(t *testing.T) {
	for _, r := range samples(t) {
		b := mustEncode(t, r)
		got, err := Decode(b)
		if err != nil || !same(got, r) || got.Epoch() != r.Table.From {
			t.Fatalf("%q: %v %v", r.Operator, got, err)
		}
	}
	// One byte per owner up to 256 instances, two beyond.
	if b := mustEncode(t, samples(t)[0]); len(b) != 5+1+1+5+1+1+6+4 {
		t.Fatalf("%d bytes: %x", len(b), b)
	}
}

func reseal(b []byte) []byte {
	if len(b) >= headerLen+trailerLen {
		end := len(b) - trailerLen
		binary.LittleEndian.PutUint32(b[end:], crc32.Checksum(b[:end], castagnoli))
	}
	return b
}

func TestReconfigCorrupt(t *testing.T) {
	good := mustEncode(t, samples(t)[0])
	var bad [][]byte
	for i := range good {
		b := bytes.Clone(good)
		b[i] ^= 0x40
		bad = append(bad, b, good[:i])
	}
	bad = append(bad, append(bytes.Clone(good), 0))
	for _, b := range bad {
		if _, err := Decode(b); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%x: %v", b, err)
		}
	}
	for _, c := range []struct {
		body []byte
		want string
	}{
		// epoch 1, operator "", 2 instances, 16M key groups in 2 bytes.
		{[]byte{1, 0, 2, 0x80, 0x80, 0x80, 8, 0, 1}, "key groups"},
		{[]byte{1, 0, 2, 3, 0, 1}, "3 key groups of 1 bytes each, but 2 bytes remain"},
		{[]byte{1, 0, 2, 2, 0, 2}, "owned by instance 2 of 2"},
		{[]byte{0x81, 0, 0, 2, 1, 0}, "non-minimal"},
		{[]byte{1, 0, 0, 1, 0}, "instances at offset 7: 0 is outside"},
		{[]byte{1, 9, 'a'}, "operator"},
	} {
		b := reseal(append(append([]byte(recMagic+"\x01"), c.body...), 0, 0, 0, 0))
		if _, err := Decode(b); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%x: %v, want %q", c.body, err, c.want)
		}
	}
}

func TestReconfigEncodeErrors(t *testing.T) {
	if _, err := Encode(Reconfig{Operator: "x"}); err == nil {
		t.Fatal("no table")
	}
	if _, err := Encode(Reconfig{Operator: strings.Repeat("x", MaxOperatorLen+1), Table: partition.Contiguous(4, 2)}); err == nil {
		t.Fatal("long name")
	}
}

// Mutated inputs rarely carry a valid checksum, so each input is also
// decoded with its checksum recomputed, to reach the field decoder.
func FuzzDecode(f *testing.F) {
	for _, r := range samples(f) {
		f.Add(mustEncode(f, r))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, in := range [][]byte{b, reseal(bytes.Clone(b))} {
			r, err := Decode(in)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error does not wrap ErrCorrupt: %v", err)
				}
				continue
			}
			out, err := Encode(r)
			if err != nil {
				t.Fatalf("decoded reconfiguration does not encode: %v", err)
			}
			if !bytes.Equal(in, out) {
				t.Fatalf("re-encoding differs:\n in %x\nout %x", in, out)
			}
		}
	})
}
