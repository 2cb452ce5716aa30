package gen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"time"

	"github.com/weirstream/weir/internal/bin"
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
//
// A reader resumed by SeekSplits from another parallelism has positions
// of another format (see posSplitFormat).
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
	if s.sp != nil {
		next := s.seq
		if used < r.last {
			next = s.seqAt(used)
		}
		return s.splitPosition(next), nil
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

// posDecoder reads the fields of a position; the first error sticks.
type posDecoder = bin.Decoder

// position is a decoded position.
type position struct {
	format    byte
	inst, par uint64
	k         uint64 // format 1: records emitted
	t0        int64
	spent     uint64
	mod       uint64   // format 2: the modulus of the classes
	next      []uint64 // format 2: the first sequence number left by class
}

// decode decodes pos, taken on a generator with s's settings, and checks
// it on its own; the caller checks the instance.
func (s *schedule) decode(pos []byte) (position, error) {
	var p position
	if len(pos) == 0 {
		return p, errors.New("empty position")
	}
	if p.format = pos[0]; p.format != posFormat && p.format != posSplitFormat {
		return p, fmt.Errorf("position format %d, want %d or %d", pos[0], posFormat, posSplitFormat)
	}
	d := posDecoder{B: pos[1:]}
	kind, config := d.Byte(), d.Uint64()
	p.inst, p.par = d.Uvarint(), d.Uvarint()
	if p.format == posFormat {
		p.k = d.Uvarint()
	}
	p.t0, p.spent = d.Varint(), d.Uvarint()
	if p.format == posSplitFormat {
		if p.mod = d.Uvarint(); d.Err == nil {
			if err := checkClasses(p.inst, p.par, p.mod); err != nil {
				return p, err
			}
		}
		for range p.mod / max(p.par, 1) {
			if p.next = append(p.next, d.Uvarint()); d.Err != nil {
				break
			}
		}
	}
	switch {
	case d.Err != nil:
		return p, fmt.Errorf("position of %d bytes is %w", len(pos), d.Err)
	case len(d.B) != 0:
		return p, fmt.Errorf("position has %d bytes too many", len(d.B))
	case kind != s.kind:
		name := kindNames[kind]
		if name == "" {
			name = fmt.Sprintf("an unknown generator (kind %d)", kind)
		}
		return p, fmt.Errorf("position of %s", name)
	case config != s.config:
		return p, errors.New("position taken with other settings (Seed, Events, Rate, StartTime, EventTimeRate or the generator's own)")
	case p.spent > math.MaxInt64:
		return p, fmt.Errorf("position has a corrupt time spent, %d ns", p.spent)
	}
	for _, v := range p.next {
		if v >= maxSeq {
			return p, fmt.Errorf("position at record %d, beyond the sequence numbers", v)
		}
	}
	return p, nil
}

// checkPlain checks the number of records emitted of a position of
// format 1 of instance inst of par.
func (s *schedule) checkPlain(p position) error {
	if total := share(s.events, int(p.inst), int(p.par)); s.events > 0 && p.k > uint64(total) {
		return fmt.Errorf("position after record %d, beyond the share of %d", p.k, total)
	}
	if p.k > (math.MaxUint64-p.inst)/p.par {
		return fmt.Errorf("position after record %d, beyond the sequence numbers", p.k)
	}
	return nil
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
	p, err := s.decode(pos)
	if err == nil && (p.inst != s.first || p.par != s.step) {
		err = fmt.Errorf("position of instance %d of %d, on the reader of instance %d of %d", p.inst, p.par, s.first, s.step)
	}
	if err == nil && p.format == posFormat {
		err = s.checkPlain(p)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	r.last = 0
	if p.format == posSplitFormat {
		s.resumeSplit(p.mod, p.next, p.t0, p.spent)
		return nil
	}
	s.sp, s.ragged = nil, false
	s.seq = s.first + p.k*s.step
	s.left = -1
	if s.total >= 0 {
		s.left = s.total - int64(p.k)
	}
	s.resumeTime(p.t0, p.spent)
	return nil
}

// resumeTime sets the origin of the event times and the time spent of
// the Duration; pacing starts again at the next Read.
func (s *schedule) resumeTime(t0 int64, spent uint64) {
	s.t0Ms = t0
	s.started, s.emitted = false, 0
	s.spent0, s.spent = time.Duration(spent), time.Duration(spent)
	if s.duration > 0 && s.spent >= s.duration {
		s.left = 0
	}
}
