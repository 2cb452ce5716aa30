package weir

import (
	"time"

	"github.com/weirstream/weir/internal/op"
)

// Stream is a typed stream of records in a Job.
type Stream[T any] = op.Stream[T]

// Source adds a source to the job.
func Source[T any](j *Job, name string, src Input[T], opts ...Option) Stream[T] {
	return op.SourceOf(j.e.Graph, name, src, opts...)
}

// Map applies f to every record.
func Map[T, U any](s Stream[T], f func(T) U, opts ...Option) Stream[U] {
	return op.Map[T, U](s, f, opts...)
}

// MapRef is Map with a function that reads the record through a pointer,
// which saves copying large records (structs of many fields) on every call.
// f must not keep the pointer or modify the record.
//
// mapRefOp and filterRefOp repeat the loops of mapOp and filterOp on
// purpose: wrapping one kind of function in the other would add a call per
// record on the hot path.
func MapRef[T, U any](s Stream[T], f func(*T) U, opts ...Option) Stream[U] {
	return op.MapRef[T, U](s, f, opts...)
}

// FilterRef is Filter with a predicate that reads the record through a
// pointer, which saves copying large records on every call. keep must not
// keep the pointer or modify the record.
func FilterRef[T any](s Stream[T], keep func(*T) bool, opts ...Option) Stream[T] {
	return op.FilterRef[T](s, keep, opts...)
}

// Filter keeps the records for which keep returns true.
func Filter[T any](s Stream[T], keep func(T) bool, opts ...Option) Stream[T] {
	return op.Filter[T](s, keep, opts...)
}

// FlatMap calls f for every record; f appends any number of outputs to out
// and returns it (the append style lets f avoid allocation). Selectivity
// may declare that f makes at most or exactly one output per record.
func FlatMap[T, U any](s Stream[T], f func(v T, out []U) []U, opts ...Option) Stream[U] {
	return op.FlatMap[T, U](s, f, opts...)
}

// Union merges streams of the same type. Watermarks are the minimum over the
// inputs.
func Union[T any](s Stream[T], more ...Stream[T]) Stream[T] {
	return op.Union[T](s, more...)
}

// Sink sends the stream to sink. By default the sink runs as one instance;
// see Output's documentation for Parallelism.
func Sink[T any](s Stream[T], sink Output[T], opts ...Option) {
	op.Sink[T](s, sink, opts...)
}

// EventTime assigns event times to the records of s and generates
// watermarks with a bounded out-of-orderness: at each epoch end, the
// watermark is the largest event time seen minus maxOutOfOrder (minus one
// millisecond, so that a record exactly maxOutOfOrder late is still on
// time). ts returns a record's event time in milliseconds.
//
// Each instance tracks its own maximum; downstream operators take the
// minimum over their inputs. An instance that has seen no record yet holds
// the watermark back until it sees one or its input ends, and so does one
// whose input has gone quiet: a source split that stays empty (more
// instances than partitions, say) holds back every window until the input
// ends. IdleAfter(d) lifts that: an instance that has had no record for d
// of processing time is idle, and receivers leave it out of their minimum
// until it sees a record again (see IdleAfter). Give EventTime the
// parallelism of its source: an instance fed by several source splits
// sees their maximum, and its watermark can run ahead of the slower
// splits.
//
// An event time must be one that every window downstream can hold (see
// WindowSpec.TimeRange; math.MinInt64 and math.MaxInt64 never are): a
// record with another fails the job, with an error that names the record,
// before its time reaches a watermark. Input that may hold such times is
// best checked where it is decoded, where a bad record can go to a
// dead-letter output.
func EventTime[T any](s Stream[T], ts func(T) int64, maxOutOfOrder time.Duration, opts ...Option) Stream[T] {
	return op.EventTime[T](s, ts, maxOutOfOrder, opts...)
}
