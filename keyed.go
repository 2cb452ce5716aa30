package weir

import (
	"time"

	"github.com/weirstream/weir/internal/op"
)

// KeyedStream is a stream partitioned by key: every record with the same
// key goes to the same instance of the next keyed operator, through the key
// group of the key's hash.
type KeyedStream[K comparable, T any] = op.KeyedStream[K, T]

// KeyBy partitions s by key. Keys must not change after key returns them
// (a string built over a buffer that is later written, with unsafe, breaks
// this). Name names the key attribute: keyed operators (Process, or those
// declared with KeyedState) keyed by the same name and key type in a row
// share one parallel region, with no shuffle between them (see
// KeyedState).
func KeyBy[T any, K comparable](s Stream[T], key func(T) K, opts ...Option) KeyedStream[K, T] {
	return op.KeyBy[T, K](s, key, opts...)
}

// WindowSpec says how a keyed stream is cut into windows: Tumbling,
// Sliding, Session or Global.
type WindowSpec = op.WindowSpec

// Tumbling windows of a fixed size, aligned to the epoch of event time:
// [n*size, (n+1)*size).
func Tumbling(size time.Duration) WindowSpec {
	return op.Tumbling(size)
}

// Sliding windows of a fixed size that start every slide.
func Sliding(size, slide time.Duration) WindowSpec {
	return op.Sliding(size, slide)
}

// Session windows per key that close after gap without records.
func Session(gap time.Duration) WindowSpec {
	return op.Session(gap)
}

// Global is one window per key over the whole input; it fires when the
// input ends. It needs no event time.
func Global() WindowSpec {
	return op.Global()
}

// WindowOption configures a window.
type WindowOption = op.WindowOption

// AllowedLateness keeps a window's state for d after it fired; records that
// arrive in that time update it and it fires again at the next epoch end.
// Records later than that go to the late output (see WindowedStream.Late).
func AllowedLateness(d time.Duration) WindowOption {
	return op.AllowedLateness(d)
}

// WindowOptions applies operator options (Name, Parallelism) to the window
// operator.
func WindowOptions(opts ...Option) WindowOption {
	return op.WindowOptions(opts...)
}

// WindowedStream is a keyed stream cut into windows, waiting for an
// aggregation: Aggregate, Reduce or Count.
type WindowedStream[K comparable, T any] = op.WindowedStream[K, T]

// Window cuts a keyed stream into windows.
func Window[K comparable, T any](k KeyedStream[K, T], w WindowSpec, opts ...WindowOption) WindowedStream[K, T] {
	return op.Window[K, T](k, w, opts...)
}

// WindowResult is the value of one window of one key.
//
// Downstream, a result carries the event time End−1, the last
// millisecond of its window, for every kind of window (a session's End
// is its last record's time plus the gap; the global window's End−1 is
// math.MaxInt64−1, which only another global window holds); the pairs
// of Join and the results of TopN and ArgMax carry it too. The window
// fires when the watermark reaches End−1, and its results come before
// the marker that carries that watermark, so they are on time for the
// operators downstream. A window downstream gathers the results whose
// End−1 falls in it: a tumbling window of the same size as a tumbling
// window upstream groups exactly the results of one upstream window (its
// window [Start, End) is theirs), which is how to compute something over
// all keys of a window (TopN and ArgMax do it for rankings; WindowAll
// over the results, for any aggregate).
type WindowResult[K comparable, R any] = op.WindowResult[K, R]

// Aggregator folds the records of a window into an accumulator of type A
// and turns it into a result of type R. Add is required. Init makes a new
// accumulator (the zero value if nil); Result is the identity if nil (A
// must then be R).
//
// Merge combines two accumulators, each of which has seen at least one
// record. It is required for session windows (which merge when they
// overlap). When it is given, Weir also pre-aggregates: each sending
// instance folds an epoch's records per key and window before the key-group
// exchange and sends one accumulator per key and window, which the owner
// merges. Merge must therefore be associative, and the result must not
// depend on how records were split between accumulators.
type Aggregator[T, A, R any] = op.Aggregator[T, A, R]

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

// Join joins two keyed streams over windows: when a window fires, f is
// called for every pair of a left and a right record with the same key in
// that window (an inner join), and its results form the output. Tumbling,
// sliding and global windows are supported. Records later than the allowed
// lateness are counted in Metrics().Late. With AllowedLateness, a record
// that arrives after its window fired makes the window fire again with all
// its pairs, including those already emitted (as Flink's window join
// does): downstream operators see those pairs twice.
func Join[K comparable, L, R, O any](l KeyedStream[K, L], r KeyedStream[K, R], w WindowSpec, f func(key K, l L, r R) O, opts ...WindowOption) Stream[O] {
	return op.Join[K, L, R, O](l, r, w, f, opts...)
}
