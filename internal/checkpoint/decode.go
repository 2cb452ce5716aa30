package checkpoint

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
)

// decoder reads the fields of a body b[off:end]. Every length and count it
// returns has been checked against the bytes that remain, so nothing it
// feeds to make is larger than the input.
type decoder struct {
	b     []byte
	off   int
	end   int
	item  string // "state blob", "source blob", ... for error messages
	idx   int
	names []string // operator names seen, at most maxNames
}

const maxNames = 16

func (d *decoder) fail(field, format string, args ...any) error {
	where := field
	if d.item != "" {
		where = fmt.Sprintf("%s %d: %s", d.item, d.idx, field)
	}
	return corrupt("", d.off, "%s: %s", where, fmt.Sprintf(format, args...))
}

func (d *decoder) uvarint(field string) (uint64, error) {
	v, n := binary.Uvarint(d.b[d.off:d.end])
	switch {
	case n == 0:
		return 0, d.fail(field, "truncated varint")
	case n < 0:
		return 0, d.fail(field, "varint overflows 64 bits")
	case n != uvarintLen(v):
		return 0, d.fail(field, "non-minimal varint")
	}
	d.off += n
	return v, nil
}

func (d *decoder) int(field string) (int, error) {
	v, err := d.uvarint(field)
	if err == nil && v > math.MaxInt {
		return 0, d.fail(field, "%d does not fit an int", v)
	}
	return int(v), err
}

// count reads a count of items each at least minSize bytes long.
func (d *decoder) count(field string, minSize int) (int, error) {
	start := d.off
	v, err := d.uvarint(field)
	if err != nil {
		return 0, err
	}
	if rem := d.end - d.off; v > uint64(rem/minSize) {
		d.off = start
		return 0, d.fail(field, "count %d exceeds what the remaining %d bytes can hold", v, rem)
	}
	return int(v), nil
}

// bytes reads a length-prefixed byte string. The result aliases d.b with
// its capacity capped; an empty one is nil.
func (d *decoder) bytes(field string) ([]byte, error) {
	start := d.off
	v, err := d.uvarint(field)
	if err != nil {
		return nil, err
	}
	if rem := d.end - d.off; v > uint64(rem) {
		d.off = start
		return nil, d.fail(field, "length %d exceeds the remaining %d bytes", v, rem)
	}
	if v == 0 {
		return nil, nil
	}
	n := d.off + int(v)
	s := d.b[d.off:n:n]
	d.off = n
	return s, nil
}

// name reads a length-prefixed string, reusing an earlier equal one: the
// blobs of one operator share its name instead of allocating a copy each.
func (d *decoder) name(field string) (string, error) {
	s, err := d.bytes(field)
	if err != nil {
		return "", err
	}
	for _, n := range d.names {
		if string(s) == n {
			return n, nil
		}
	}
	n := string(s)
	if len(d.names) < maxNames {
		d.names = append(d.names, n)
	}
	return n, nil
}

// frame checks magic, version and checksum, and returns the end of the body
// and the stored checksum.
func frame(b []byte, magic, what string) (int, uint32, error) {
	if len(b) < headerLen+trailerLen {
		return 0, 0, corrupt("", len(b), "truncated: %d bytes, a %s is at least %d", len(b), what, headerLen+trailerLen)
	}
	if string(b[:len(magic)]) != magic {
		return 0, 0, corrupt("", 0, "bad magic %q, want %q (not a %s)", b[:len(magic)], magic, what)
	}
	if b[len(magic)] != formatVersion {
		return 0, 0, corrupt("", len(magic), "unsupported %s format version %d, want %d", what, b[len(magic)], formatVersion)
	}
	end := len(b) - trailerLen
	stored := binary.LittleEndian.Uint32(b[end:])
	if sum := crc32.Checksum(b[:end], castagnoli); sum != stored {
		return 0, 0, corrupt("", end, "checksum mismatch: stored %08x, computed %08x (truncated or corrupted %s)", stored, sum, what)
	}
	return end, stored, nil
}

// partHeader reads a part's checkpoint, epoch, process and process count.
func (d *decoder) partHeader(p *Part) error {
	var err error
	if p.Checkpoint, err = d.uvarint("checkpoint"); err != nil {
		return err
	}
	if p.Epoch, err = d.uvarint("epoch"); err != nil {
		return err
	}
	if p.Process, err = d.int("process"); err != nil {
		return err
	}
	p.Processes, err = d.int("processes")
	return err
}

// maxPartHeader bounds the bytes of a part before its state blob count.
const maxPartHeader = headerLen + 4*binary.MaxVarintLen64

// decodePartHeader decodes the header of a part from its first bytes
// (at most the part's body; maxPartHeader of them are enough): magic,
// version, checkpoint, epoch, process and process count. It verifies no
// checksum.
func decodePartHeader(b []byte) (Part, error) {
	if len(b) < headerLen || string(b[:len(partMagic)]) != partMagic || b[len(partMagic)] != formatVersion {
		return Part{}, corrupt("", 0, "not a part of format version %d", formatVersion)
	}
	d := decoder{b: b, off: headerLen, end: len(b)}
	var p Part
	if err := d.partHeader(&p); err != nil {
		return Part{}, err
	}
	return p, nil
}

// DecodePart decodes and verifies a part encoded by EncodePart. It is a
// pure function of b. The Data of the returned blobs aliases b (capacity
// capped, so appending to one never overwrites another): b must not be
// modified while they are in use. Empty Data decodes as nil, an empty Meta
// as nil. Errors wrap ErrCorrupt and give the offset of the problem.
func DecodePart(b []byte) (Part, error) {
	end, _, err := frame(b, partMagic, "part")
	if err != nil {
		return Part{}, err
	}
	d := decoder{b: b, off: headerLen, end: end}
	var p Part
	if err := d.partHeader(&p); err != nil {
		return Part{}, err
	}
	// A blob is at least 3 bytes: operator length, key group or instance,
	// data length.
	n, err := d.count("state blob count", 3)
	if err != nil {
		return Part{}, err
	}
	if n > 0 {
		p.State = make([]StateBlob, n)
	}
	d.item = "state blob"
	for i := range p.State {
		s := &p.State[i]
		d.idx = i
		if s.Operator, err = d.name("operator"); err != nil {
			return Part{}, err
		}
		kg, err := d.uvarint("key group")
		if err != nil {
			return Part{}, err
		}
		if kg > math.MaxUint32 {
			return Part{}, d.fail("key group", "%d does not fit 32 bits", kg)
		}
		s.KeyGroup = uint32(kg)
		if s.Data, err = d.bytes("data"); err != nil {
			return Part{}, err
		}
	}
	d.item = ""
	if n, err = d.count("source blob count", 3); err != nil {
		return Part{}, err
	}
	if n > 0 {
		p.Sources = make([]SourceBlob, n)
	}
	d.item = "source blob"
	for i := range p.Sources {
		s := &p.Sources[i]
		d.idx = i
		if s.Operator, err = d.name("operator"); err != nil {
			return Part{}, err
		}
		if s.Instance, err = d.int("instance"); err != nil {
			return Part{}, err
		}
		if s.Data, err = d.bytes("data"); err != nil {
			return Part{}, err
		}
	}
	d.item = ""
	if n, err = d.count("meta count", 2); err != nil {
		return Part{}, err
	}
	if n > 0 {
		p.Meta = make(map[string]string, n)
	}
	d.item = "meta entry"
	prev := ""
	for i := range n {
		d.idx = i
		start := d.off
		k, err := d.bytes("key")
		if err != nil {
			return Part{}, err
		}
		if i > 0 && string(k) <= prev {
			d.off = start
			return Part{}, d.fail("key", "%q does not sort after %q", k, prev)
		}
		prev = string(k)
		v, err := d.bytes("value")
		if err != nil {
			return Part{}, err
		}
		p.Meta[prev] = string(v)
	}
	d.item = ""
	if d.off != end {
		return Part{}, corrupt("", d.off, "%d bytes after the last field", end-d.off)
	}
	if err := checkPart(&p); err != nil {
		return Part{}, corrupt("", -1, "%v", err)
	}
	return p, nil
}

// DecodeManifest decodes and verifies a manifest encoded by EncodeManifest.
// It is a pure function of b. Errors wrap ErrCorrupt and give the offset of
// the problem.
func DecodeManifest(b []byte) (Manifest, error) {
	end, _, err := frame(b, manifestMagic, "manifest")
	if err != nil {
		return Manifest{}, err
	}
	d := decoder{b: b, off: headerLen, end: end}
	var m Manifest
	if m.Checkpoint, err = d.uvarint("checkpoint"); err != nil {
		return Manifest{}, err
	}
	if m.Epoch, err = d.uvarint("epoch"); err != nil {
		return Manifest{}, err
	}
	// An entry is at least 6 bytes: name length, size, 4-byte CRC.
	start := d.off
	if m.Processes, err = d.count("processes", 6); err != nil {
		return Manifest{}, err
	}
	if m.Processes < 1 {
		d.off = start
		return Manifest{}, d.fail("processes", "is 0, want at least 1")
	}
	m.Parts = make([]ManifestPart, m.Processes)
	d.item = "part"
	for i := range m.Parts {
		e := &m.Parts[i]
		d.idx = i
		name, err := d.bytes("name")
		if err != nil {
			return Manifest{}, err
		}
		e.Name = string(name)
		size, err := d.uvarint("size")
		if err != nil {
			return Manifest{}, err
		}
		if size > math.MaxInt64 {
			return Manifest{}, d.fail("size", "%d does not fit an int64", size)
		}
		e.Size = int64(size)
		if d.end-d.off < 4 {
			return Manifest{}, d.fail("crc", "truncated: %d bytes left, want 4", d.end-d.off)
		}
		e.CRC = binary.LittleEndian.Uint32(b[d.off:])
		d.off += 4
	}
	if d.off != end {
		return Manifest{}, corrupt("", d.off, "%d bytes after the last field", end-d.off)
	}
	return m, nil
}

// trailerCRC returns the checksum stored in the trailer of a verified file.
func trailerCRC(b []byte) uint32 {
	return binary.LittleEndian.Uint32(b[len(b)-trailerLen:])
}
