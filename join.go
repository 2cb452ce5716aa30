package weir

import "github.com/weirstream/weir/internal/op"

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
