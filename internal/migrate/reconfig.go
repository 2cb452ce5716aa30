package migrate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"

	"github.com/weirstream/weir/internal/partition"
)

// Reconfig says: from epoch Table.From on, the keyed operator named
// Operator routes by Table. Processes announce it to each other over the
// mesh ahead of that epoch and apply it at the same epoch, with no master.
//
// The operator is named as its keyed state is saved in checkpoints (the
// graph node's name, checkpoint.StateBlob.Operator), which stays the same
// across runs of one job and across the processes of one run.
type Reconfig struct {
	Operator string
	Table    *partition.Table
}

// Epoch is the first epoch the reconfiguration is in force for.
func (r Reconfig) Epoch() uint64 { return r.Table.From }

// The encoding of a Reconfig:
//
//	"WRRC" magic, a version byte,
//	epoch, len(operator), operator bytes, instances, key groups (uvarints),
//	the owner of every key group in order, one byte each when there are at
//	most 256 instances, else two bytes little-endian,
//	CRC-32C (Castagnoli) of all that precedes, 4 bytes little-endian.
//
// Varints are minimal and nothing follows the checksum, so a Reconfig has
// exactly one encoding: processes may compare announcements byte for byte.
const (
	recMagic   = "WRRC"
	recVersion = 1
	headerLen  = len(recMagic) + 1
	trailerLen = 4
	// MaxOperatorLen bounds an operator name in a Reconfig.
	MaxOperatorLen = 1 << 10
	// maxGroups bounds the key groups a decoder accepts (before it checks
	// them against the bytes that remain).
	maxGroups = 1 << 24
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is wrapped by every error Decode returns.
var ErrCorrupt = errors.New("migrate: corrupt reconfiguration")

// ownerWidth is the bytes per owner for a table over n instances.
func ownerWidth(n int) int {
	if n <= 256 {
		return 1
	}
	return 2
}

// Encode returns the canonical encoding of r.
func Encode(r Reconfig) ([]byte, error) {
	if r.Table == nil {
		return nil, fmt.Errorf("migrate: a reconfiguration of %q without a table", r.Operator)
	}
	if len(r.Operator) > MaxOperatorLen {
		return nil, fmt.Errorf("migrate: operator name of %d bytes; at most %d", len(r.Operator), MaxOperatorLen)
	}
	t := r.Table
	n, k := t.Instances(), t.Groups()
	b := make([]byte, 0, headerLen+40+len(r.Operator)+k*ownerWidth(n)+trailerLen)
	b = append(b, recMagic...)
	b = append(b, recVersion)
	b = binary.AppendUvarint(b, t.From)
	b = binary.AppendUvarint(b, uint64(len(r.Operator)))
	b = append(b, r.Operator...)
	b = binary.AppendUvarint(b, uint64(n))
	b = binary.AppendUvarint(b, uint64(k))
	return seal(appendOwners(b, t)), nil
}

// appendOwners appends the owner of every key group of t, in order, in
// ownerWidth(t.Instances()) bytes each.
func appendOwners(b []byte, t *partition.Table) []byte {
	w := ownerWidth(t.Instances())
	for kg := 0; kg < t.Groups(); kg++ {
		o := t.Owner(partition.KeyGroup(kg))
		if w == 1 {
			b = append(b, byte(o))
		} else {
			b = binary.LittleEndian.AppendUint16(b, uint16(o))
		}
	}
	return b
}

// seal appends the checksum of b.
func seal(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// decoder reads fields; every error it returns wraps ErrCorrupt.
type decoder struct {
	b   []byte // without the trailer
	off int
}

func (d *decoder) fail(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s at offset %d: %s", ErrCorrupt, field, d.off, fmt.Sprintf(format, args...))
}

func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

func (d *decoder) uvarint(field string) (uint64, error) {
	v, n := binary.Uvarint(d.b[d.off:])
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

// bounded reads a uvarint in [lo, hi].
func (d *decoder) bounded(field string, lo, hi uint64) (int, error) {
	start := d.off
	v, err := d.uvarint(field)
	if err == nil && (v < lo || v > hi) {
		d.off = start // the error names where the field starts
		err = d.fail(field, "%d is outside [%d, %d]", v, lo, hi)
	}
	return int(v), err
}

// Decode reads an encoding made by Encode. It never panics on any input,
// and allocates at most a small multiple of len(b): each key group it
// accepts takes at least one byte of the input.
func Decode(b []byte) (Reconfig, error) {
	d, err := open(b, recVersion)
	if err != nil {
		return Reconfig{}, err
	}
	epoch, err := d.uvarint("epoch")
	if err != nil {
		return Reconfig{}, err
	}
	name, err := d.operator()
	if err != nil {
		return Reconfig{}, err
	}
	instances, err := d.bounded("instances", 1, 1<<16)
	if err != nil {
		return Reconfig{}, err
	}
	groups, err := d.bounded("key groups", 1, maxGroups)
	if err != nil {
		return Reconfig{}, err
	}
	if w, rest := ownerWidth(instances), len(d.b)-d.off; rest != groups*w {
		return Reconfig{}, d.fail("owners", "%d key groups of %d bytes each, but %d bytes remain", groups, w, rest)
	}
	owner := make([]int, groups)
	if err := d.owners(owner, instances); err != nil {
		return Reconfig{}, err
	}
	t, err := partition.NewTable(epoch, instances, owner)
	if err != nil {
		return Reconfig{}, d.fail("owners", "%v", err)
	}
	return Reconfig{Operator: name, Table: t}, nil
}

// open checks the header and trailer of b, an encoding of version
// version, and returns the decoder of its fields.
func open(b []byte, version byte) (*decoder, error) {
	if len(b) < headerLen+trailerLen {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrCorrupt, len(b))
	}
	if string(b[:len(recMagic)]) != recMagic {
		return nil, fmt.Errorf("%w: bad magic %q", ErrCorrupt, b[:len(recMagic)])
	}
	if v := b[len(recMagic)]; v != version {
		return nil, fmt.Errorf("%w: version %d; want %d", ErrCorrupt, v, version)
	}
	end := len(b) - trailerLen
	if want, got := binary.LittleEndian.Uint32(b[end:]), crc32.Checksum(b[:end], castagnoli); want != got {
		return nil, fmt.Errorf("%w: checksum %08x, computed %08x", ErrCorrupt, want, got)
	}
	return &decoder{b: b[:end], off: headerLen}, nil
}

// operator reads an operator's name and its length before it.
func (d *decoder) operator() (string, error) {
	n, err := d.bounded("operator length", 0, MaxOperatorLen)
	if err != nil {
		return "", err
	}
	if n > len(d.b)-d.off {
		return "", d.fail("operator", "%d bytes, %d remain", n, len(d.b)-d.off)
	}
	name := string(d.b[d.off : d.off+n])
	d.off += n
	return name, nil
}

// owners reads len(owner) owners of a table over instances instances, as
// appendOwners wrote them. It does not check them against instances:
// partition.NewTable does.
func (d *decoder) owners(owner []int, instances int) error {
	w := ownerWidth(instances)
	if len(owner)*w > len(d.b)-d.off {
		return d.fail("owners", "%d key groups of %d bytes each, but %d bytes remain", len(owner), w, len(d.b)-d.off)
	}
	for kg := range owner {
		if w == 1 {
			owner[kg] = int(d.b[d.off+kg])
		} else {
			owner[kg] = int(binary.LittleEndian.Uint16(d.b[d.off+2*kg:]))
		}
	}
	d.off += len(owner) * w
	return nil
}
