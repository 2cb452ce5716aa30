package checkpoint

import (
	"encoding/binary"
	"fmt"
	"math"
)

const indexMagic = "WRCI" // a part's index (part-P.idx)

// PartIndex locates the state blobs of one part file, so that one key
// group's blob of a complete checkpoint can be read without reading, and
// verifying, the whole part. It names the part it was made for by the
// part's size and trailer CRC, which the manifest records too: an index
// left over from another write of the part does not match.
type PartIndex struct {
	Checkpoint uint64
	Process    int
	PartSize   int64  // the part file's size
	PartCRC    uint32 // the CRC-32C in the part file's trailer
	Blobs      []BlobLoc
}

// BlobLoc is where one state blob's data lies in its part file, with the
// CRC-32C of that data.
type BlobLoc struct {
	Operator string
	KeyGroup uint32
	Offset   int64 // of the first byte of the data, from the file's start
	Length   int64
	CRC      uint32
}

// IndexPart encodes p as EncodePart does and returns, with the bytes,
// their index: where each of p's state blobs lies in them.
func IndexPart(p Part) ([]byte, PartIndex, error) {
	b, locs, err := encodePart(p)
	if err != nil {
		return nil, PartIndex{}, err
	}
	return b, PartIndex{Checkpoint: p.Checkpoint, Process: p.Process, PartSize: int64(len(b)), PartCRC: trailerCRC(b), Blobs: locs}, nil
}

// checkIndex checks what the encoding cannot express wrongly on its own:
// the blobs lie in the part's body, in file order without overlapping,
// and no (operator, key group) comes twice. Encoder and decoder share it.
func checkIndex(x *PartIndex) error {
	if x.Process < 0 {
		return fmt.Errorf("negative process %d", x.Process)
	}
	if x.PartSize < headerLen+trailerLen {
		return fmt.Errorf("part size %d is less than a part's least %d", x.PartSize, headerLen+trailerLen)
	}
	type key struct {
		op string
		kg uint32
	}
	seen := make(map[key]struct{}, len(x.Blobs))
	end := int64(headerLen)
	for i, l := range x.Blobs {
		if l.Offset < end || l.Length < 0 || l.Length > x.PartSize-trailerLen-l.Offset {
			return fmt.Errorf("blob %d: bytes %d to %d are not after %d and inside the part's %d bytes of body",
				i, l.Offset, l.Offset+l.Length, end, x.PartSize-trailerLen)
		}
		end = l.Offset + l.Length
		k := key{l.Operator, l.KeyGroup}
		if _, dup := seen[k]; dup {
			return fmt.Errorf("blob %d: duplicate operator %q key group %d", i, l.Operator, l.KeyGroup)
		}
		seen[k] = struct{}{}
	}
	return nil
}

// EncodeIndex encodes x: magic "WRCI", version 1, uvarint checkpoint,
// process and part size, the part's CRC (4 bytes, little-endian), the
// operator names (a count, then each length-prefixed, in the order the
// blobs first name them), the blobs (a count, then per blob its name's
// number, key group, offset and length as uvarints and its CRC as 4
// bytes), then the CRC-32C of everything before it. The encoding is
// deterministic.
func EncodeIndex(x PartIndex) ([]byte, error) {
	if err := checkIndex(&x); err != nil {
		return nil, fmt.Errorf("checkpoint: encode index: %w", err)
	}
	num := map[string]int{}
	var names []string
	for _, l := range x.Blobs {
		if _, ok := num[l.Operator]; !ok {
			num[l.Operator] = len(names)
			names = append(names, l.Operator)
		}
	}
	b := make([]byte, 0, 32+len(x.Blobs)*16)
	b = append(b, indexMagic...)
	b = append(b, formatVersion)
	b = binary.AppendUvarint(b, x.Checkpoint)
	b = binary.AppendUvarint(b, uint64(x.Process))
	b = binary.AppendUvarint(b, uint64(x.PartSize))
	b = binary.LittleEndian.AppendUint32(b, x.PartCRC)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, n := range names {
		b = appendString(b, n)
	}
	b = binary.AppendUvarint(b, uint64(len(x.Blobs)))
	for _, l := range x.Blobs {
		b = binary.AppendUvarint(b, uint64(num[l.Operator]))
		b = binary.AppendUvarint(b, uint64(l.KeyGroup))
		b = binary.AppendUvarint(b, uint64(l.Offset))
		b = binary.AppendUvarint(b, uint64(l.Length))
		b = binary.LittleEndian.AppendUint32(b, l.CRC)
	}
	return seal(b), nil
}

// crc32 reads a 4-byte little-endian checksum.
func (d *decoder) crc32(field string) (uint32, error) {
	if d.end-d.off < 4 {
		return 0, d.fail(field, "truncated: %d bytes left, want 4", d.end-d.off)
	}
	v := binary.LittleEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v, nil
}

// int64 reads a uvarint that fits an int64.
func (d *decoder) int64(field string) (int64, error) {
	v, err := d.uvarint(field)
	if err == nil && v > math.MaxInt64 {
		return 0, d.fail(field, "%d does not fit an int64", v)
	}
	return int64(v), err
}

// DecodeIndex decodes and verifies an index encoded by EncodeIndex. It is
// a pure function of b that never panics and allocates a bounded multiple
// of len(b). Errors wrap ErrCorrupt and give the offset of the problem.
func DecodeIndex(b []byte) (PartIndex, error) {
	end, _, err := frame(b, indexMagic, "index")
	if err != nil {
		return PartIndex{}, err
	}
	d := decoder{b: b, off: headerLen, end: end}
	var x PartIndex
	if x.Checkpoint, err = d.uvarint("checkpoint"); err != nil {
		return PartIndex{}, err
	}
	if x.Process, err = d.int("process"); err != nil {
		return PartIndex{}, err
	}
	if x.PartSize, err = d.int64("part size"); err != nil {
		return PartIndex{}, err
	}
	if x.PartCRC, err = d.crc32("part crc"); err != nil {
		return PartIndex{}, err
	}
	names, err := d.indexNames()
	if err != nil {
		return PartIndex{}, err
	}
	if x.Blobs, err = d.indexBlobs(names); err != nil {
		return PartIndex{}, err
	}
	if d.off != end {
		return PartIndex{}, corrupt("", d.off, "%d bytes after the last field", end-d.off)
	}
	if err := checkIndex(&x); err != nil {
		return PartIndex{}, corrupt("", -1, "%v", err)
	}
	return x, nil
}

// indexNames reads an index's operator names: distinct, as the encoder
// writes them.
func (d *decoder) indexNames() ([]string, error) {
	n, err := d.count("name count", 1)
	if err != nil {
		return nil, err
	}
	names := make([]string, n)
	seen := make(map[string]struct{}, n)
	d.item = "name"
	for i := range names {
		d.idx = i
		s, err := d.bytes("name")
		if err != nil {
			return nil, err
		}
		if _, dup := seen[string(s)]; dup {
			return nil, d.fail("name", "%q comes twice", s)
		}
		names[i] = string(s)
		seen[names[i]] = struct{}{}
	}
	d.item = ""
	return names, nil
}

// indexBlobs reads an index's blobs. Every name is used, and first in
// its order, as the encoder writes them.
func (d *decoder) indexBlobs(names []string) ([]BlobLoc, error) {
	// A blob is at least 8 bytes: name, key group, offset, length, CRC.
	n, err := d.count("blob count", 8)
	if err != nil {
		return nil, err
	}
	var blobs []BlobLoc
	if n > 0 {
		blobs = make([]BlobLoc, n)
	}
	used := 0
	d.item = "blob"
	for i := range blobs {
		l := &blobs[i]
		d.idx = i
		start := d.off
		name, err := d.uvarint("name")
		if err != nil {
			return nil, err
		}
		if name > uint64(used) || name >= uint64(len(names)) {
			d.off = start
			return nil, d.fail("name", "number %d, want at most %d of %d", name, used, len(names))
		}
		if name == uint64(used) {
			used++
		}
		l.Operator = names[name]
		kg, err := d.uvarint("key group")
		if err != nil {
			return nil, err
		}
		if kg > math.MaxUint32 {
			return nil, d.fail("key group", "%d does not fit 32 bits", kg)
		}
		l.KeyGroup = uint32(kg)
		if l.Offset, err = d.int64("offset"); err != nil {
			return nil, err
		}
		if l.Length, err = d.int64("length"); err != nil {
			return nil, err
		}
		if l.CRC, err = d.crc32("crc"); err != nil {
			return nil, err
		}
	}
	d.item = ""
	if used != len(names) {
		return nil, corrupt("", d.off, "%d of %d names are used", used, len(names))
	}
	return blobs, nil
}
