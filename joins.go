package weir

import (
	"time"

	"github.com/weirstream/weir/internal/op"
)

// Unit is the key of a window over a whole stream (WindowAll): the one
// value of a type with one value.
type Unit = op.Unit

// WindowAll cuts a whole stream, unkeyed, into windows: every record
// belongs to the windows of its time, whatever it holds (Flink's
// windowAll). Aggregate, Reduce and Count then work as on a keyed stream
// whose records all have the key Unit{}, with one result per window.
//
// The window operator runs as one instance (a Parallelism other than 1 in
// its WindowOptions is refused). With an aggregator that has Merge (Count
// and Reduce always do) under the default partitioning, each instance
// upstream folds the records of an epoch per window and sends one
// accumulator per window to it, which merges them when the window fires:
// local pre-aggregation and one global merge, so the single instance sees
// a few accumulators per epoch instead of the records. Under hash
// partitioning (or with an aggregator without Merge, or session windows)
// every record goes to the one instance; under pkg and prompt the one
// instance folds the epoch's records itself.
func WindowAll[T any](s Stream[T], w WindowSpec, opts ...WindowOption) WindowedStream[Unit, T] {
	return op.WindowAll[T](s, w, opts...)
}

// TopN keeps, of the results of each window (those with the same Start
// and End), the n with the greatest values by less, and emits them
// greatest first once the window is complete. Results of equal value are
// ranked by key, lowest first (see ArgMax for the order of keys), so the
// n kept do not depend on the order results arrive in. n must be at
// least 1.
//
// A window's results are complete when the watermark reaches End−1, the
// time they carry: the window operator upstream emits them before the
// marker whose watermark does. TopN runs in parallel over windows (keyed
// by Start and End), so the results of different windows come from
// different instances; its outputs keep their time End−1.
//
// Updating input (an upstream window with AllowedLateness that fires
// again): by default a window's results are forgotten once it fired, and
// a result that arrives after that is counted in Metrics().Late and
// dropped. With StateTTL(d, EventTimeDomain), d at least the upstream
// lateness, a window's results are kept until the watermark reaches
// End−1+d: a later result replaces the earlier one of its key, and at the
// end of its epoch the window's top n is emitted again, whole (downstream
// sees the window's top n more than once, the last one current).
// StateTTL in processing time is refused.
func TopN[K comparable, R any](s Stream[WindowResult[K, R]], n int, less func(a, b R) bool, opts ...Option) Stream[WindowResult[K, R]] {
	return op.TopN[K, R](s, n, less, opts...)
}

// ArgMax keeps, of the results of each window (those with the same Start
// and End), every result whose value is the greatest by less: all of
// them when several tie. It emits them in the order of their keys once
// the window is complete, as TopN does (see TopN for when, and for
// updating input). Keys are ordered alike in every run: strings,
// integers, floats and bools by value, structs field by field and arrays
// element by element, other keys by their %v text.
func ArgMax[K comparable, R any](s Stream[WindowResult[K, R]], less func(a, b R) bool, opts ...Option) Stream[WindowResult[K, R]] {
	return op.ArgMax[K, R](s, less, opts...)
}

// IntervalJoin joins two keyed streams by time: f is called for every
// pair of a left record l and a right record r with the same key whose
// event times satisfy l.ts+lower <= r.ts <= l.ts+upper (Flink's interval
// join), as soon as the second of the two arrives. The output's event
// time is the later of the two.
//
// Both inputs need event time, and lower must not be above upper (either
// may be negative). Each side's records are kept only while a record on
// time can still match them: a left record until the watermark reaches
// l.ts+upper, a right one until it reaches r.ts−lower. A record at or
// behind the watermark when it arrives is late: it is counted in
// Metrics().Late and dropped (its partners may be gone). State is kept
// by key group and saved in checkpoints; with KeyedStateIn it lives in
// the backend. StateTTL does not apply (the interval bounds the state)
// and is refused.
func IntervalJoin[K comparable, L, R, O any](l KeyedStream[K, L], r KeyedStream[K, R], lower, upper time.Duration, f func(key K, l L, r R) O, opts ...Option) Stream[O] {
	return op.IntervalJoin[K, L, R, O](l, r, lower, upper, f, opts...)
}

// InnerJoin joins two keyed streams without windows: every record of
// either side is kept and paired with every record of the other side with
// the same key, whenever that arrived; f is called for each pair as soon
// as its second record arrives. With event time on both inputs, an
// output's event time is the later of the two records' (it may be behind
// the watermark, and so late for a window downstream, when the later
// record was itself behind it).
//
// Without StateTTL the state grows with the input and lives as long as
// the job. StateTTL(d, domain) bounds it: a record expires d after it
// arrived, in event time (once the watermark reaches its event time plus
// d; both inputs then need event time) or processing time (once the wall
// clock passes its arrival plus d); expired records are dropped at epoch
// ends and match nothing after that. State is kept by key group and saved
// in checkpoints; with KeyedStateIn it lives in the backend.
func InnerJoin[K comparable, L, R, O any](l KeyedStream[K, L], r KeyedStream[K, R], f func(key K, l L, r R) O, opts ...Option) Stream[O] {
	return op.InnerJoin[K, L, R, O](l, r, f, opts...)
}
