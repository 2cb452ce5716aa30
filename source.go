package weir

import "io"

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
	return &sliceReader[T]{recs: s.Records[lo:hi], batch: bs}, nil
}

type sliceReader[T any] struct {
	recs  []T
	batch int
}

func (r *sliceReader[T]) Read() ([]T, error) {
	if len(r.recs) == 0 {
		return nil, io.EOF
	}
	n := min(r.batch, len(r.recs))
	b := r.recs[:n:n]
	r.recs = r.recs[n:]
	return b, nil
}

func (r *sliceReader[T]) Close() error { return nil }
