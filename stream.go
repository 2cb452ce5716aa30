package weir

import "github.com/weirstream/weir/internal/op"

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
