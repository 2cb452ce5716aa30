package gen

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// A reader implements weir.Rescalable. Instance j of p emits the sequence
// numbers j, j+p, ..., so what an old reader had left is every sequence
// number of its class modulo p from the first it had not emitted on. A
// new reader i of p' takes those of its own class modulo p', in order: it
// tracks, for each class modulo m = lcm(p, p') that is i modulo p', the
// first sequence number left, and skips the ones below it. Once past all
// of them, it emits i, i+p', ... like any reader.
//
// Such a reader's position has its own format, which says, class by
// class, what it has left; a later SeekSplits or Seek composes it (m then
// grows to the lcm of all the parallelisms involved, unless the readers
// had caught up, which brings it back to p'). Its bytes are:
//
//	format   byte (posSplitFormat)
//	kind     byte
//	config   uint64, little-endian, as in format 1
//	instance, parallelism   uvarints
//	t0       varint, ms: the origin of the event times
//	spent    uvarint, ns: of the Duration
//	m        uvarint: the modulus, a multiple of the parallelism
//	next     m/parallelism uvarints: for x = 0, 1, ..., the first sequence
//	         number left of the class instance + x*parallelism modulo m
//
// The rules of a rescaled reader: every record keeps its values (they
// depend on the sequence number only); its event time is
// t0 + seq*1000/R ms, R being Rate when paced and EventTimeRate
// otherwise, and t0 the earliest origin of the old positions, so that
// with Rate 0 and StartTime set it is the time the record always has, and
// with Rate > 0 it is within (p-1)/Rate seconds of the time the old run
// would have given it, plus the differences between the old readers'
// clocks at Open. Pacing starts again at the first Read, at Rate/p'
// records per second per reader, as after Seek. Duration counts on from
// the largest time spent of the old positions.
const posSplitFormat = 2

const (
	// maxClasses bounds the classes a rescaled reader tracks, and so the
	// size of its position.
	maxClasses = 1 << 14
	// maxSeq bounds the sequence numbers of a rescaled reader, so that its
	// arithmetic does not overflow.
	maxSeq = 1 << 62
)

// splitPlan is what a rescaled reader has left.
type splitPlan struct {
	mod     uint64   // a multiple of the parallelism
	next    []uint64 // by class: the first sequence number left
	maxNext uint64   // max(next): from there on, all are left
	seqs    []uint64 // the sequence numbers of the current batch
}

// class returns the index in next of the class of seq, of a share of the
// given parallelism.
func (sp *splitPlan) class(seq, step uint64) int { return int(seq % sp.mod / step) }

// after returns the first sequence number left after seq, of the same
// share; it skips fewer than len(next) numbers, since the class of the
// least of next is never skipped.
func (sp *splitPlan) after(seq, step uint64) uint64 {
	y := seq + step
	for y < sp.maxNext && y < sp.next[sp.class(y, step)] {
		y += step
	}
	return y
}

// fill sets seqs to the n sequence numbers left from seq on.
func (sp *splitPlan) fill(seq, step uint64, n int) {
	sp.seqs = sp.seqs[:0]
	for range n {
		sp.seqs = append(sp.seqs, seq)
		seq = sp.after(seq, step)
	}
}

// roundUp returns the least number at least v that is c modulo m.
func roundUp(v, c, m uint64) uint64 {
	if v <= c {
		return c
	}
	return c + (v-c+m-1)/m*m
}

// checkClasses checks the modulus of a position of instance inst of par.
func checkClasses(inst, par, mod uint64) error {
	switch {
	case par == 0 || inst >= par || mod == 0 || mod%par != 0:
		return fmt.Errorf("position of instance %d of %d has a corrupt modulus %d", inst, par, mod)
	case mod/par > maxClasses:
		return fmt.Errorf("position has %d classes of sequence numbers, more than %d", mod/par, maxClasses)
	}
	return nil
}

// resumeSplit makes the schedule emit, from the next Read, the sequence
// numbers of the share left by next: next[x] is the first one left of the
// class first + x*step modulo mod.
func (s *schedule) resumeSplit(mod uint64, next []uint64, t0 int64, spent uint64) {
	sp := &splitPlan{mod: mod, next: make([]uint64, len(next)), seqs: make([]uint64, 0, s.batch)}
	s.seq = maxSeq
	for x, v := range next {
		v = roundUp(v, s.first+uint64(x)*s.step, mod)
		sp.next[x] = v
		sp.maxNext, s.seq = max(sp.maxNext, v), min(s.seq, v)
	}
	s.sp, s.ragged = sp, false
	s.left = -1
	if n := uint64(s.events); s.events > 0 {
		s.left = 0
		for _, v := range sp.next {
			if v < n {
				s.left += int64((n-1-v)/mod + 1)
			}
		}
	}
	s.resumeTime(t0, spent)
}

// splitPosition encodes the position of a rescaled reader whose next
// sequence number is seq.
func (s *schedule) splitPosition(seq uint64) []byte {
	mod, next := s.step, []uint64{seq}
	if seq < s.sp.maxNext {
		mod, next = s.sp.mod, make([]uint64, len(s.sp.next))
		for x, v := range s.sp.next {
			next[x] = roundUp(max(v, seq), s.first+uint64(x)*s.step, mod)
		}
		// If what is left is all the share from some point on, say so.
		sorted := slices.Sorted(slices.Values(next))
		plain := true
		for k := 1; k < len(sorted) && plain; k++ {
			plain = sorted[k]-sorted[k-1] == s.step
		}
		if plain {
			mod, next = s.step, sorted[:1]
		}
	}
	b := make([]byte, 0, 2+8+(5+len(next))*binary.MaxVarintLen64)
	b = append(b, posSplitFormat, s.kind)
	b = binary.LittleEndian.AppendUint64(b, s.config)
	b = binary.AppendUvarint(b, s.first)
	b = binary.AppendUvarint(b, s.step)
	b = binary.AppendVarint(b, s.t0Ms)
	b = binary.AppendUvarint(b, uint64(s.spent))
	b = binary.AppendUvarint(b, mod)
	for _, v := range next {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

// SeekSplits implements weir.Rescalable; see posSplitFormat for the rules.
// With the parallelism of the positions, it is Seek.
func (r *reader[T]) SeekSplits(positions [][]byte) error {
	s := r.s
	if r.buf == nil {
		return fmt.Errorf("%s: SeekSplits on a closed reader", s.name)
	}
	par := uint64(len(positions))
	if par == 0 {
		return fmt.Errorf("%s: SeekSplits without positions", s.name)
	}
	ps := make([]position, par)
	for j, pos := range positions {
		p, err := s.decode(pos)
		if err == nil && (p.inst != uint64(j) || p.par != par) {
			err = fmt.Errorf("position of instance %d of %d", p.inst, p.par)
		}
		if err == nil && p.format == posFormat {
			if err = s.checkPlain(p); err == nil && p.k >= (maxSeq-p.inst)/p.par {
				err = fmt.Errorf("position after record %d, beyond the sequence numbers", p.k)
			}
			p.mod, p.next = p.par, []uint64{p.inst + p.k*p.par}
		}
		if err != nil {
			return fmt.Errorf("%s: position %d of %d: %w", s.name, j, par, err)
		}
		ps[j] = p
	}
	if par == s.step {
		return r.Seek(positions[s.first])
	}
	mod := s.step
	for _, p := range ps {
		mod = mod / gcd(mod, p.mod) * p.mod
		if mod/s.step > maxClasses {
			return fmt.Errorf("%s: resuming %d readers on %d would track more than %d classes of sequence numbers per reader", s.name, par, s.step, maxClasses)
		}
	}
	next := make([]uint64, mod/s.step)
	for x := range next {
		c := s.first + uint64(x)*s.step
		p := ps[c%par]
		next[x] = p.next[c%p.mod/par]
	}
	t0, spent := ps[0].t0, ps[0].spent
	for _, p := range ps {
		t0, spent = min(t0, p.t0), max(spent, p.spent)
	}
	s.resumeSplit(mod, next, t0, spent)
	r.last = 0
	return nil
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
