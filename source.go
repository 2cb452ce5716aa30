package weir

import "github.com/weirstream/weir/internal/dataflow"

// Input is a connector that produces the records of a stream (the Source
// function adds one to a job). An input is split into parallel readers, one
// per instance of the source operator; the runtime calls Open once per
// instance, each from the goroutine that will then call Read.
type Input[T any] = dataflow.Input[T]

// SourceContext tells a source which share of its input one reader owns.
type SourceContext = dataflow.SourceContext

// Reader reads one instance's share of a source.
//
// Read returns the next batch of records. The returned slice is owned by the
// reader and stays valid only until the next call to Read or Close; the
// runtime never retains it. At the end of the input Read returns an empty
// batch and io.EOF. A reader with nothing available yet returns an empty batch
// and a nil error within a few milliseconds, so that epochs can still be cut
// on time. Any other error fails the job; it should name where the bad input
// is (file and line, or topic, partition and offset).
type Reader[T any] = dataflow.Reader[T]

// SliceSource is a source over records held in memory. Instance i of n reads
// the i-th contiguous share of the slice, in batches of at most BatchSize
// records (default 4096: the batches are views of the slice, so a bigger
// batch costs no memory and spreads the per-batch work of the fused chain
// over more records). The records are never copied or modified. Its
// readers implement Rescalable.
type SliceSource[T any] = dataflow.SliceSource[T]
