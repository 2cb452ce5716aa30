package weir

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
// over more records). The records are never copied or modified.
type SliceSource[T any] struct {
	Records   []T
	BatchSize int
}

// Open implements Input.
func (s SliceSource[T]) Open(ctx SourceContext) (Reader[T], error) {
	n := len(s.Records)
	lo := n * ctx.Instance / ctx.Parallelism
	hi := n * (ctx.Instance + 1) / ctx.Parallelism
	bs := s.BatchSize
	if bs <= 0 {
		bs = 4096
	}
	return &sliceReader[T]{recs: s.Records[lo:hi], batch: bs, ctx: ctx}, nil
}

// sliceReader reads recs[next:] in batches. It implements Seekable: a
// position is the offset of the next record within the share.
type sliceReader[T any] struct {
	recs  []T
	batch int
	ctx   SourceContext
	next  int // index in recs of the next record to read
	last  int // length of the batch the last Read returned
}

func (r *sliceReader[T]) Read() ([]T, error) {
	if r.next == len(r.recs) {
		r.last = 0
		return nil, io.EOF
	}
	n := min(r.batch, len(r.recs)-r.next)
	b := r.recs[r.next : r.next+n : r.next+n]
	r.next += n
	r.last = n
	return b, nil
}

func (r *sliceReader[T]) Close() error { return nil }

// slicePosFormat is the first byte of a SliceSource position, which is
// followed by the uvarints instance, parallelism, length of the share and
// offset in it of the next record.
const slicePosFormat = 1

// Position implements Seekable.
func (r *sliceReader[T]) Position(used int) ([]byte, error) {
	if used < 0 || used > r.last {
		return nil, fmt.Errorf("weir: SliceSource: Position(%d) after a batch of %d records", used, r.last)
	}
	b := make([]byte, 1, 1+4*binary.MaxVarintLen64)
	b[0] = slicePosFormat
	for _, v := range [...]int{r.ctx.Instance, r.ctx.Parallelism, len(r.recs), r.next - r.last + used} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	return b, nil
}

// Seek implements Seekable.
func (r *sliceReader[T]) Seek(pos []byte) error {
	if len(pos) == 0 {
		return errors.New("weir: SliceSource: empty position")
	}
	if pos[0] != slicePosFormat {
		return fmt.Errorf("weir: SliceSource: position format %d, want %d", pos[0], slicePosFormat)
	}
	var v [4]uint64
	rest := pos[1:]
	for i := range v {
		x, k := binary.Uvarint(rest)
		if k <= 0 {
			return fmt.Errorf("weir: SliceSource: position of %d bytes is truncated or corrupt", len(pos))
		}
		v[i], rest = x, rest[k:]
	}
	if len(rest) != 0 {
		return fmt.Errorf("weir: SliceSource: position has %d bytes too many", len(rest))
	}
	inst, par, n, off := v[0], v[1], v[2], v[3]
	switch {
	case inst != uint64(r.ctx.Instance) || par != uint64(r.ctx.Parallelism):
		return fmt.Errorf("weir: SliceSource: position of instance %d of %d, on the reader of instance %d of %d", inst, par, r.ctx.Instance, r.ctx.Parallelism)
	case n != uint64(len(r.recs)):
		return fmt.Errorf("weir: SliceSource: position in a share of %d records, this share has %d", n, len(r.recs))
	case off > n:
		return fmt.Errorf("weir: SliceSource: position at record %d, beyond the share of %d", off, n)
	}
	r.next, r.last = int(off), 0
	return nil
}
