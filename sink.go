package weir

import "github.com/weirstream/weir/internal/dataflow"

// Output is a connector that consumes the records of a stream (the Sink
// function attaches one to a stream). Write receives batches of records
// that it may read only during the call (copy what must be kept). By default
// a sink runs as one instance, so Write is never called concurrently; with
// the Parallelism option it runs as several instances that share the Sink
// value, and then the Output must be safe for concurrent use.
//
// If an Output also implements EpochSink, EndEpoch is called after the last
// record of each epoch has been written to the instance. Close is called
// once per instance after the final epoch, or not at all if the job fails.
type Output[T any] = dataflow.Output[T]

// EpochSink is an Output that wants to know where epochs end, for example to
// commit output per epoch.
type EpochSink = dataflow.EpochSink

// SinkFunc adapts a function to an Output with a no-op Close.
type SinkFunc[T any] = dataflow.SinkFunc[T]

// Collect is an Output that keeps every record it receives, for tests and
// for results small enough to hold in memory. It is safe for concurrent
// use, so it may back a sink with several instances.
type Collect[T any] = dataflow.Collect[T]
