package engine

import (
	"encoding/binary"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/weirstream/weir/internal/agree"
	"github.com/weirstream/weir/internal/bin"
)

// sharedRounds is how many of its newest frozen figures and digests a
// process repeats in each summary, so that a peer that missed a summary
// still sees every one.
const sharedRounds = 4

// sizingBoard is what every process of a job that sizes itself froze at
// the policy epochs (its figures) and decided from them (its rounds'
// digests), as this process heard it; its own entries included.
type sizingBoard struct {
	mu      sync.Mutex
	every   uint64 // the policy interval's epochs: every epoch shared is a multiple
	frozen  map[int]map[uint64][]byte
	digests map[int]map[uint64]agree.Digest
}

func newSizingBoard(every uint64) *sizingBoard {
	return &sizingBoard{every: max(every, 1), frozen: map[int]map[uint64][]byte{}, digests: map[int]map[uint64]agree.Digest{}}
}

// maxShare bounds the frozen figures one summary carries: the newest
// that fit (at least one).
const maxShare = 4 << 20

// putFrozen and putDigest record process p's figures frozen at epoch e
// and its digest of round e.
func (b *sizingBoard) putFrozen(p int, e uint64, fig []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.frozen[p] == nil {
		b.frozen[p] = map[uint64][]byte{}
	}
	if _, ok := b.frozen[p][e]; !ok {
		b.frozen[p][e] = fig
	}
}

func (b *sizingBoard) putDigest(p int, e uint64, d agree.Digest) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.digests[p] == nil {
		b.digests[p] = map[uint64]agree.Digest{}
	}
	b.digests[p][e] = d
}

// round returns the round of epoch e over procs, once every one of them
// has frozen figures past e: ok is false while one has not; complete is
// false when one passed over e (it froze a later epoch, not e), or is
// gone (it left the job) without e's, and the round is then skipped.
func (b *sizingBoard) round(e uint64, procs []int, gone func(p int) bool) (r agree.Round, ok, complete bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r.Epoch, complete = e, true
	for _, p := range procs {
		fig, has := b.frozen[p][e]
		if !has {
			newest := slices.Max(append(slices.Collect(maps.Keys(b.frozen[p])), 0))
			if newest <= e && !gone(p) {
				return r, false, false
			}
			complete = false
			continue
		}
		r.Frozen = append(r.Frozen, agree.Frozen{Process: p, Figures: fig})
	}
	return r, true, complete
}

// newestOthers is the newest epoch a process other than self froze.
func (b *sizingBoard) newestOthers(self int) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out uint64
	for p, m := range b.frozen {
		for e := range m {
			if p != self {
				out = max(out, e)
			}
		}
	}
	return out
}

// next is the smallest epoch after e that a process of procs froze.
func (b *sizingBoard) next(e uint64, procs []int) (uint64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out uint64
	for _, p := range procs {
		for f := range b.frozen[p] {
			if f > e && (out == 0 || f < out) {
				out = f
			}
		}
	}
	return out, out > 0
}

// agreed says, once every process of procs has sent its digest of round
// e, whether they are all equal to d.
func (b *sizingBoard) agreed(e uint64, procs []int, d agree.Digest) (heard, same bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	same = true
	for _, p := range procs {
		got, ok := b.digests[p][e]
		if !ok {
			return false, false
		}
		same = same && got == d
	}
	return true, same
}

// prune forgets the epochs before e.
func (b *sizingBoard) prune(e uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.frozen {
		maps.DeleteFunc(m, func(k uint64, _ []byte) bool { return k < e })
	}
	for _, m := range b.digests {
		maps.DeleteFunc(m, func(k uint64, _ agree.Digest) bool { return k < e })
	}
}

// encode is process p's share of the board for its summaries: its
// newest frozen figures and digests.
func (b *sizingBoard) encode(p int) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.frozen[p]) == 0 && len(b.digests[p]) == 0 {
		return nil
	}
	newest := func(es []uint64) []uint64 {
		slices.Sort(es)
		return es[max(0, len(es)-sharedRounds):]
	}
	fs, ds := newest(slices.Collect(maps.Keys(b.frozen[p]))), newest(slices.Collect(maps.Keys(b.digests[p])))
	for size := 0; len(fs) > 1; fs = fs[1:] {
		size = 0
		for _, e := range fs {
			size += len(b.frozen[p][e])
		}
		if size <= maxShare {
			break
		}
	}
	out := binary.AppendUvarint(nil, uint64(len(fs)))
	for _, e := range fs {
		out = binary.AppendUvarint(out, e)
		out = binary.AppendUvarint(out, uint64(len(b.frozen[p][e])))
		out = append(out, b.frozen[p][e]...)
	}
	out = binary.AppendUvarint(out, uint64(len(ds)))
	for _, e := range ds {
		d := b.digests[p][e]
		out = binary.AppendUvarint(out, e)
		out = append(out, d[:]...)
	}
	return out
}

var errSizing = errors.New("engine: a summary's sizing share does not decode")

// hear records what process p's summary shares, all of it or, if it
// does not decode (or names an epoch that is not a policy epoch),
// nothing.
func (b *sizingBoard) hear(p int, in []byte) error {
	if len(in) == 0 {
		return nil
	}
	type frozen struct {
		e   uint64
		fig []byte
	}
	var fs []frozen
	ds := map[uint64]agree.Digest{}
	d := bin.Decoder{B: in}
	for range d.Int(sharedRounds + 1) {
		e, l := d.Uvarint(), d.Int(int64(len(d.B))+1)
		if d.Err != nil || e%b.every != 0 {
			return errSizing
		}
		fs = append(fs, frozen{e, d.B[:l]})
		d.B = d.B[l:]
	}
	for range d.Int(sharedRounds + 1) {
		e := d.Uvarint()
		var g agree.Digest
		if d.Err != nil || len(d.B) < len(g) || e%b.every != 0 {
			return errSizing
		}
		copy(g[:], d.B)
		d.B = d.B[len(g):]
		ds[e] = g
	}
	if d.Err != nil || len(d.B) != 0 {
		return errSizing
	}
	for _, f := range fs {
		b.mu.Lock()
		_, had := b.frozen[p][f.e]
		b.mu.Unlock()
		if !had {
			// A copy, so that one entry does not hold the whole share.
			b.putFrozen(p, f.e, append([]byte(nil), f.fig...))
		}
	}
	for e, g := range ds {
		b.putDigest(p, e, g)
	}
	return nil
}
