package op

import (
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/window"
)

// KeyedStream is a stream partitioned by key: every record with the same
// key goes to the same instance of the next keyed operator, through the key
// group of the key's hash.
type KeyedStream[K comparable, T any] struct {
	s   Stream[T]
	key func(T) K
	// name is the key's planner name (see KeyedState), "" if unnamed.
	name string
}

// KeyBy partitions s by key. Keys must not change after key returns them
// (a string built over a buffer that is later written, with unsafe, breaks
// this). Name names the key attribute: keyed operators (Process, or those
// declared with KeyedState) keyed by the same name and key type in a row
// share one parallel region, with no shuffle between them (see
// KeyedState).
func KeyBy[T any, K comparable](s Stream[T], key func(T) K, opts ...dataflow.Option) KeyedStream[K, T] {
	c := dataflow.OpOptions(opts)
	if s.job != nil {
		refuseOptions(s.job, "KeyBy", c, 0)
	}
	return KeyedStream[K, T]{s: s, key: key, name: keyID[K](c.Name)}
}

// Stream returns the records of the keyed stream, unkeyed.
func (k KeyedStream[K, T]) Stream() Stream[T] { return k.s }

// WindowSpec says how a keyed stream is cut into windows: Tumbling,
// Sliding, Session or Global.
type WindowSpec struct{ spec window.Spec }

func ms(d time.Duration) int64 { return d.Milliseconds() }

// Tumbling windows of a fixed size, aligned to the epoch of event time:
// [n*size, (n+1)*size).
func Tumbling(size time.Duration) WindowSpec {
	return WindowSpec{window.Spec{Kind: window.Tumbling, Size: ms(size)}}
}

// Sliding windows of a fixed size that start every slide.
func Sliding(size, slide time.Duration) WindowSpec {
	return WindowSpec{window.Spec{Kind: window.Sliding, Size: ms(size), Slide: ms(slide)}}
}

// Session windows per key that close after gap without records.
func Session(gap time.Duration) WindowSpec {
	return WindowSpec{window.Spec{Kind: window.Session, Gap: ms(gap)}}
}

// Global is one window per key over the whole input; it fires when the
// input ends. It needs no event time.
func Global() WindowSpec { return WindowSpec{window.Spec{Kind: window.Global}} }

// TimeRange is the closed range of event times the windows can hold: the
// times whose windows start and end within int64 milliseconds (for a
// session, ts+gap), excluding math.MinInt64 and math.MaxInt64, which the
// watermark uses as -inf and +inf. For tumbling and sliding windows it
// falls short of the ends of int64 by less than the size; for sessions,
// by the gap at the top. EventTime fails the job on a record whose time
// is outside the range of a window downstream; a job can route such
// records elsewhere before EventTime with this range.
func (w WindowSpec) TimeRange() (lo, hi int64) { return w.spec.Range() }

// WindowOption configures a window.
type WindowOption func(*windowConfig)

type windowConfig struct {
	lateness int64
	opts     []dataflow.Option
	op       string // the operator's kind in plans: "window" unless set
}

// AllowedLateness keeps a window's state for d after it fired; records that
// arrive in that time update it and it fires again at the next epoch end.
// Records later than that go to the late output (see WindowedStream.Late).
func AllowedLateness(d time.Duration) WindowOption {
	return func(c *windowConfig) { c.lateness = ms(d) }
}

// WindowOptions applies operator options (Name, Parallelism) to the window
// operator.
func WindowOptions(opts ...dataflow.Option) WindowOption {
	return func(c *windowConfig) { c.opts = append(c.opts, opts...) }
}

// WindowedStream is a keyed stream cut into windows, waiting for an
// aggregation: Aggregate, Reduce or Count.
type WindowedStream[K comparable, T any] struct {
	k    KeyedStream[K, T]
	spec window.Spec
	cfg  windowConfig
	late *lateHandle
}

type lateHandle struct {
	node *dataflow.Node // set when the window operator is built
}

// Window cuts a keyed stream into windows.
func Window[K comparable, T any](k KeyedStream[K, T], w WindowSpec, opts ...WindowOption) WindowedStream[K, T] {
	var c windowConfig
	for _, o := range opts {
		o(&c)
	}
	spec := w.spec
	spec.Lateness = c.lateness
	return WindowedStream[K, T]{k: k, spec: spec, cfg: c, late: &lateHandle{}}
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
type WindowResult[K comparable, R any] struct {
	Key K
	// Start and End bound the window [Start, End) in event-time
	// milliseconds. The global window has Start math.MinInt64 and End
	// math.MaxInt64.
	Start, End int64
	Value      R
}

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
type Aggregator[T, A, R any] struct {
	Init   func() A
	Add    func(acc A, v T) A
	Merge  func(a, b A) A
	Result func(acc A) R
	// addN, set by Count, adds n records at once: the aggregator reads
	// no record, so the micro-batch rounds keep counts, not records.
	addN func(acc A, n int64) A
}
