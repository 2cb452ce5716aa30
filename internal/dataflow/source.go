package dataflow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
)

// Input is a connector that produces the records of a stream (the Source
// function adds one to a job). An input is split into parallel readers, one
// per instance of the source operator; the runtime calls Open once per
// instance, each from the goroutine that will then call Read.
type Input[T any] interface {
	// Open returns the reader for one instance of the source.
	Open(ctx SourceContext) (Reader[T], error)
}

// SourceContext tells a source which share of its input one reader owns.
type SourceContext struct {
	// Instance is the index of this reader, in [0, Parallelism).
	Instance int
	// Parallelism is the number of readers the source is split into.
	Parallelism int
}

// Reader reads one instance's share of a source.
//
// Read returns the next batch of records. The returned slice is owned by the
// reader and stays valid only until the next call to Read or Close; the
// runtime never retains it. At the end of the input Read returns an empty
// batch and io.EOF. A reader with nothing available yet returns an empty batch
// and a nil error within a few milliseconds, so that epochs can still be cut
// on time. Any other error fails the job; it should name where the bad input
// is (file and line, or topic, partition and offset).
type Reader[T any] interface {
	Read() ([]T, error)
	Close() error
}

// SliceSource is a source over records held in memory. Instance i of n reads
// the i-th contiguous share of the slice, in batches of at most BatchSize
// records (default 4096: the batches are views of the slice, so a bigger
// batch costs no memory and spreads the per-batch work of the fused chain
// over more records). The records are never copied or modified. Its
// readers implement Rescalable.
type SliceSource[T any] struct {
	Records   []T
	BatchSize int
}

// Open implements Input.
func (s SliceSource[T]) Open(ctx SourceContext) (Reader[T], error) {
	lo, hi := sliceShare(len(s.Records), ctx.Instance, ctx.Parallelism)
	bs := s.BatchSize
	if bs <= 0 {
		bs = 4096
	}
	return &sliceReader[T]{all: s.Records, lo: lo, recs: s.Records[lo:hi], end: hi - lo, batch: bs, ctx: ctx}, nil
}

// sliceShare returns the range [lo, hi) of n records instance i of p reads.
func sliceShare(n, i, p int) (lo, hi int) {
	return n * i / p, n * (i + 1) / p
}

// span is a range [lo, hi) of records.
type span struct{ lo, hi int }

// sliceReader reads its share, recs, in batches. It implements
// Rescalable: a position is the offset of the next record within the
// share or, after SeekSplits, the ranges of the share left to read.
type sliceReader[T any] struct {
	all   []T // all the records
	lo    int // the offset of the share in all
	recs  []T // the share
	batch int
	ctx   SourceContext
	next  int    // index in recs of the next record to read
	end   int    // the end of the range being read
	spans []span // the ranges of recs to read after it, in order
	last  int    // length of the batch the last Read returned
}

func (r *sliceReader[T]) Read() ([]T, error) {
	for r.next == r.end && len(r.spans) > 0 {
		r.next, r.end, r.spans = r.spans[0].lo, r.spans[0].hi, r.spans[1:]
	}
	if r.next == r.end {
		r.last = 0
		return nil, io.EOF
	}
	n := min(r.batch, r.end-r.next)
	b := r.recs[r.next : r.next+n : r.next+n]
	r.next += n
	r.last = n
	return b, nil
}

func (r *sliceReader[T]) Close() error { return nil }

// The first byte of a SliceSource position says its format. Format 1 is
// followed by the uvarints instance, parallelism, length of the share and
// offset in it of the next record: the rest of the share is left to read.
// Format 2, which readers rescaled by SeekSplits use unless what they have
// left is the rest of their share, is followed by the uvarints instance,
// parallelism, length of the share and number of ranges, then the ranges
// left to read as pairs of uvarints start and end, offsets in the share,
// in order and not empty.
const (
	slicePosFormat      = 1
	slicePosSplitFormat = 2
)

// Position implements Seekable.
func (r *sliceReader[T]) Position(used int) ([]byte, error) {
	if used < 0 || used > r.last {
		return nil, fmt.Errorf("weir: SliceSource: Position(%d) after a batch of %d records", used, r.last)
	}
	left := make([]span, 0, 1+len(r.spans))
	if off := r.next - r.last + used; off < r.end {
		left = append(left, span{off, r.end})
	}
	left = append(left, r.spans...)
	b := make([]byte, 1, 1+(4+2*len(left))*binary.MaxVarintLen64)
	vals := []int{r.ctx.Instance, r.ctx.Parallelism, len(r.recs)}
	switch {
	case len(left) == 0:
		b[0], vals = slicePosFormat, append(vals, len(r.recs))
	case len(left) == 1 && left[0].hi == len(r.recs):
		b[0], vals = slicePosFormat, append(vals, left[0].lo)
	default:
		b[0], vals = slicePosSplitFormat, append(vals, len(left))
		for _, s := range left {
			vals = append(vals, s.lo, s.hi)
		}
	}
	for _, v := range vals {
		b = binary.AppendUvarint(b, uint64(v))
	}
	return b, nil
}

// slicePos is a decoded position: the ranges of the share of instance
// inst of par, n records long, left to read.
type slicePos struct {
	inst, par, n uint64
	left         []span
}

// decodeSlicePos decodes a position of either format.
func decodeSlicePos(pos []byte) (slicePos, error) {
	var p slicePos
	if len(pos) == 0 {
		return p, errors.New("empty position")
	}
	if pos[0] != slicePosFormat && pos[0] != slicePosSplitFormat {
		return p, fmt.Errorf("position format %d, want %d or %d", pos[0], slicePosFormat, slicePosSplitFormat)
	}
	rest := pos[1:]
	bad := false
	next := func() uint64 {
		x, k := binary.Uvarint(rest)
		if k <= 0 {
			bad = true
			return 0
		}
		rest = rest[k:]
		return x
	}
	p.inst, p.par, p.n = next(), next(), next()
	if pos[0] == slicePosFormat {
		off := next()
		if !bad && off > p.n {
			return p, fmt.Errorf("position at record %d, beyond the share of %d", off, p.n)
		}
		if off < p.n {
			p.left = []span{{int(off), int(p.n)}}
		}
	} else {
		count, prev := next(), uint64(0)
		if !bad && (count == 0 || count > p.n) {
			return p, fmt.Errorf("position has %d ranges in a share of %d records", count, p.n)
		}
		for range count {
			lo, hi := next(), next()
			if bad {
				break
			}
			if lo < prev || hi <= lo || hi > p.n {
				return p, fmt.Errorf("position has a range [%d, %d) after record %d, out of order or beyond the share of %d", lo, hi, prev, p.n)
			}
			p.left, prev = append(p.left, span{int(lo), int(hi)}), hi
		}
	}
	switch {
	case bad:
		return p, fmt.Errorf("position of %d bytes is truncated or corrupt", len(pos))
	case len(rest) != 0:
		return p, fmt.Errorf("position has %d bytes too many", len(rest))
	}
	return p, nil
}

// Seek implements Seekable.
func (r *sliceReader[T]) Seek(pos []byte) error {
	p, err := decodeSlicePos(pos)
	switch {
	case err != nil:
		return fmt.Errorf("weir: SliceSource: %w", err)
	case p.inst != uint64(r.ctx.Instance) || p.par != uint64(r.ctx.Parallelism):
		return fmt.Errorf("weir: SliceSource: position of instance %d of %d, on the reader of instance %d of %d", p.inst, p.par, r.ctx.Instance, r.ctx.Parallelism)
	case p.n != uint64(len(r.recs)):
		return fmt.Errorf("weir: SliceSource: position in a share of %d records, this share has %d", p.n, len(r.recs))
	}
	r.next, r.end, r.spans, r.last = 0, 0, p.left, 0
	return nil
}

// SeekSplits implements Rescalable. The reader reads, in the order of
// the slice, the records of its share that the old readers had left.
func (r *sliceReader[T]) SeekSplits(positions [][]byte) error {
	par := len(positions)
	if par == 0 {
		return errors.New("weir: SliceSource: SeekSplits without positions")
	}
	myLo, myHi := r.lo, r.lo+len(r.recs)
	var left []span // absolute, within the share
	for j, pos := range positions {
		p, err := decodeSlicePos(pos)
		if err != nil {
			return fmt.Errorf("weir: SliceSource: position %d of %d: %w", j, par, err)
		}
		if p.inst != uint64(j) || p.par != uint64(par) {
			return fmt.Errorf("weir: SliceSource: position %d of %d is of instance %d of %d", j, par, p.inst, p.par)
		}
		lo, hi := sliceShare(len(r.all), j, par)
		if p.n != uint64(hi-lo) {
			return fmt.Errorf("weir: SliceSource: position %d of %d is in a share of %d records, instance %d of %d of these %d records has %d", j, par, p.n, j, par, len(r.all), hi-lo)
		}
		for _, s := range p.left {
			if a, b := max(lo+s.lo, myLo), min(lo+s.hi, myHi); a < b {
				left = append(left, span{a - myLo, b - myLo})
			}
		}
	}
	// The old shares come in order and do not overlap: merge the ranges
	// that touch.
	var spans []span
	for _, s := range left {
		if k := len(spans) - 1; k >= 0 && spans[k].hi == s.lo {
			spans[k].hi = s.hi
		} else {
			spans = append(spans, s)
		}
	}
	r.next, r.end, r.spans, r.last = 0, 0, spans, 0
	return nil
}

// Identity implements Identified: the number and type of the records.
func (s SliceSource[T]) Identity() string {
	return fmt.Sprintf("%d records of %v", len(s.Records), reflect.TypeFor[T]())
}
