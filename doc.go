// Package weir is a stream processing engine: typed dataflow programs over
// unbounded or finite streams, run on all cores of one process or on many
// processes with no master (Cluster): every process runs the same program
// and talks directly to every other.
//
// A job is built from functions (Go methods cannot take type parameters):
//
//	job := weir.NewJob("views", weir.Workers(4))
//	events := weir.Source(job, "events", src)               // Stream[Event]
//	timed := weir.EventTime(events, eventTime, 5*time.Second) // event time + watermarks
//	views := weir.Filter(timed, isView, weir.Stateless())
//	keyed := weir.KeyBy(views, func(e Event) string { return e.Campaign })
//	counts := weir.Count(weir.Window(keyed, weir.Tumbling(10*time.Second)))
//	weir.Sink(counts, out)
//	err := job.Run(ctx)
//
// How it runs. Sources cut their streams into epochs, by wall-clock
// interval (BatchInterval, default 1 s) or record count (EpochRecords), and
// end each with an in-band marker that carries the watermark. Records move
// in batches. The planner groups operators into parallel regions (see
// Explain): stateless operators (Map, Filter, FlatMap declared Stateless,
// EventTime) run fused in the goroutine of their input, one instance per
// worker. Keyed operators (windows, joins, Process, functions declared
// with KeyedState) receive their records through bounded queues, routed by
// key group: the key's hash picks one of KeyGroups groups (default 128)
// and each instance owns a contiguous range of them. A function that
// declares nothing (or Stateful) runs in one instance. An operator acts
// on an epoch's end once every input has delivered it: windows whose end
// the watermark has passed fire then.
//
// Order. Records of different instances interleave where streams merge,
// unless the job is Ordered: then every parallel region's exit restores
// the order of its entry, and a pipeline of record operators emits what a
// single worker would, record for record.
//
// Event time. EventTime assigns timestamps (milliseconds) and derives the
// watermark from a bounded out-of-orderness; with IdleAfter, an instance
// that has had no record for a while stops holding it back. A window
// [start, end) fires
// once the watermark reaches end-1. With AllowedLateness its state is kept
// a while longer and late records update it (it fires again); records
// later than that are counted in Metrics().Late and go to the window's
// Late() stream. Nothing is dropped without a count. A record whose time
// a window downstream cannot hold (its window would start or end beyond
// int64; see WindowSpec.TimeRange) fails the job at EventTime.
//
// Ownership. Functions passed to operators must not keep references to the
// records they are given beyond the call, except records they return.
// Outputs receive batches they may read only during Write.
package weir
