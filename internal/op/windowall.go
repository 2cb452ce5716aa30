package op

import (
	"fmt"

	"github.com/weirstream/weir/internal/dataflow"
)

// Unit is the key of a window over a whole stream (WindowAll): the one
// value of a type with one value.
type Unit struct{}

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
	ws := Window(KeyedStream[Unit, T]{s: s, key: func(T) Unit { return Unit{} }}, w, opts...)
	if c := dataflow.OpOptions(ws.cfg.opts); c.ParSet && c.Parallelism != 1 && s.job != nil {
		name := c.Name
		if name == "" {
			name = "WindowAll"
		}
		s.job.Fail(fmt.Errorf("weir: %s: Parallelism(%d): a window over a whole stream runs as one instance", name, c.Parallelism))
	}
	ws.cfg.opts = append(ws.cfg.opts, dataflow.Parallelism(1))
	ws.cfg.op = "windowAll"
	return ws
}
