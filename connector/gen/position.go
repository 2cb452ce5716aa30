package gen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"time"
)

// A reader implements weir.Seekable. Records are a function of their
// global sequence number, so a position is the number of records the
// instance has emitted, with what else the records after it depend on:
// the origin of the event times and, for Duration, the time already
// spent. Its bytes are:
//
//	format   byte (posFormat)
//	kind     byte (kindYSB, kindZipf, kindNexmark)
//	config   uint64, little-endian: fingerprint of the settings that
//	         determine the records (Seed, Events, Rate, StartTime,
//	         EventTimeRate and the generator's own)
//	instance, parallelism, records emitted   uvarints
//	t0       varint, ms: the origin of the event times
//	spent    uvarint, ns: of the Duration
const posFormat = 1

// The kinds of generators.
const (
	kindYSB byte = iota + 1
	kindZipf
	kindNexmark
)

var kindNames = map[byte]string{kindYSB: "gen.YSB", kindZipf: "gen.Zipf", kindNexmark: "gen.Nexmark"}

// identify sets the generator kind and the fingerprint of the timing
// settings t and of vals, the generator's own settings.
func (s *schedule) identify(kind byte, t timing, seed uint64, vals ...uint64) {
	h := fnv.New64a()
	var b []byte
	b = append(b, kind)
	for _, v := range append([]uint64{seed, uint64(t.events), math.Float64bits(t.rate),
		uint64(t.startTime), math.Float64bits(t.eventTimeRate)}, vals...) {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	h.Write(b)
	s.kind, s.config = kind, h.Sum64()
}

// Position implements weir.Seekable.
func (r *reader[T]) Position(used int) ([]byte, error) {
	s := r.s
	if used < 0 || used > r.last {
		return nil, fmt.Errorf("%s: Position(%d) after a batch of %d records", s.name, used, r.last)
	}
	k := (s.seq-s.first)/s.step - uint64(r.last-used)
	b := make([]byte, 0, 2+8+6*binary.MaxVarintLen64)
	b = append(b, posFormat, s.kind)
	b = binary.LittleEndian.AppendUint64(b, s.config)
	b = binary.AppendUvarint(b, s.first)
	b = binary.AppendUvarint(b, s.step)
	b = binary.AppendUvarint(b, k)
	b = binary.AppendVarint(b, s.t0Ms)
	b = binary.AppendUvarint(b, uint64(s.spent))
	return b, nil
}

// errTruncated reports a position that ends early or has a malformed
// varint.
var errTruncated = errors.New("truncated or corrupt")

// posDecoder reads the fields of a position; the first error sticks.
type posDecoder struct {
	b   []byte
	err error
}

// fail records that the position ends early, unless an error came first.
func (d *posDecoder) fail() {
	if d.err == nil {
		d.err = errTruncated
	}
}

func (d *posDecoder) byte() byte {
	if d.err != nil || len(d.b) < 1 {
		d.fail()
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *posDecoder) uint64() uint64 {
	if d.err != nil || len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *posDecoder) uvarint() uint64 {
	v, k := binary.Uvarint(d.b)
	if d.err != nil || k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *posDecoder) varint() int64 {
	v, k := binary.Varint(d.b)
	if d.err != nil || k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return v
}

// Seek implements weir.Seekable. The records after the position come
// again, the same values with the same event times; pacing starts again
// at the first Read after Seek, and Duration counts on from the time
// already spent when the position was taken.
func (r *reader[T]) Seek(pos []byte) error {
	s := r.s
	if r.buf == nil {
		return fmt.Errorf("%s: Seek on a closed reader", s.name)
	}
	if len(pos) == 0 {
		return fmt.Errorf("%s: empty position", s.name)
	}
	if pos[0] != posFormat {
		return fmt.Errorf("%s: position format %d, want %d", s.name, pos[0], posFormat)
	}
	d := posDecoder{b: pos[1:]}
	kind, config := d.byte(), d.uint64()
	inst, par, k := d.uvarint(), d.uvarint(), d.uvarint()
	t0, spent := d.varint(), d.uvarint()
	switch {
	case d.err != nil:
		return fmt.Errorf("%s: position of %d bytes is %w", s.name, len(pos), d.err)
	case len(d.b) != 0:
		return fmt.Errorf("%s: position has %d bytes too many", s.name, len(d.b))
	case kind != s.kind:
		name := kindNames[kind]
		if name == "" {
			name = fmt.Sprintf("an unknown generator (kind %d)", kind)
		}
		return fmt.Errorf("%s: position of %s", s.name, name)
	case inst != s.first || par != s.step:
		return fmt.Errorf("%s: position of instance %d of %d, on the reader of instance %d of %d", s.name, inst, par, s.first, s.step)
	case config != s.config:
		return fmt.Errorf("%s: position taken with other settings (Seed, Events, Rate, StartTime, EventTimeRate or the generator's own)", s.name)
	case s.total >= 0 && k > uint64(s.total):
		return fmt.Errorf("%s: position after record %d, beyond the share of %d", s.name, k, s.total)
	case k > (math.MaxUint64-s.first)/s.step:
		return fmt.Errorf("%s: position after record %d, beyond the sequence numbers", s.name, k)
	case spent > math.MaxInt64:
		return fmt.Errorf("%s: position has a corrupt time spent, %d ns", s.name, spent)
	}
	s.seq = s.first + k*s.step
	s.left = -1
	if s.total >= 0 {
		s.left = s.total - int64(k)
	}
	s.t0Ms = t0
	s.started, s.emitted = false, 0
	s.spent0, s.spent = time.Duration(spent), time.Duration(spent)
	if s.duration > 0 && s.spent >= s.duration {
		s.left = 0
	}
	r.last = 0
	return nil
}
