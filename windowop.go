package weir

import "github.com/weirstream/weir/internal/op"

// Aggregate folds each window of each key with agg. Records later than the
// allowed lateness go to ws.Late().
func Aggregate[K comparable, T, A, R any](ws WindowedStream[K, T], agg Aggregator[T, A, R]) Stream[WindowResult[K, R]] {
	return op.Aggregate[K, T, A, R](ws, agg)
}

// Reduce combines the records of each window of each key with f. The
// order in which records reach f is not defined (instances run in parallel
// and records are pre-aggregated before the exchange), so f must be
// associative and commutative.
func Reduce[K comparable, T any](ws WindowedStream[K, T], f func(a, b T) T) Stream[WindowResult[K, T]] {
	return op.Reduce[K, T](ws, f)
}

// Count counts the records of each window of each key.
func Count[K comparable, T any](ws WindowedStream[K, T]) Stream[WindowResult[K, int64]] {
	return op.Count[K, T](ws)
}
