package weir

import (
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/op"
)

// Input is a connector that produces the records of a stream (the Source
// function adds one to a job). An input is split into parallel readers, one
// per instance of the source operator; the runtime calls Open once per
// instance, each from the goroutine that will then call Read.
type Input[T any] = dataflow.Input[T]

// SourceContext tells a source which share of its input one reader owns.
type SourceContext = dataflow.SourceContext

// Reader reads one instance's share of a source.
//
// Read returns the next batch of records. The returned slice is owned by the
// reader and stays valid only until the next call to Read or Close; the
// runtime never retains it. At the end of the input Read returns an empty
// batch and io.EOF. A reader with nothing available yet returns an empty batch
// and a nil error within a few milliseconds, so that epochs can still be cut
// on time. Any other error fails the job; it should name where the bad input
// is (file and line, or topic, partition and offset).
type Reader[T any] = dataflow.Reader[T]

// SliceSource is a source over records held in memory. Instance i of n reads
// the i-th contiguous share of the slice, in batches of at most BatchSize
// records (default 4096: the batches are views of the slice, so a bigger
// batch costs no memory and spreads the per-batch work of the fused chain
// over more records). The records are never copied or modified. Its
// readers implement Rescalable.
type SliceSource[T any] = dataflow.SliceSource[T]

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

// Recoverable is an Input that keeps something of its own across runs of
// its job besides its readers' positions: the file sources' dead-letter
// files, say. Before any reader of the job opens, each process of the job
// calls Recover once on every Recoverable input of the job (whether or not
// the process runs one of its readers), with how the job starts:
// RecoverContext.Checkpoint is the checkpoint the job restored from, or 0
// when it starts from scratch (no checkpoints, or none complete yet).
//
// A restored job reads again the records after the checkpoint, so what
// the input kept of them is already there; a job started from scratch
// reads everything again, so what it kept is stale. Recover may be called
// again, with another context, before a later run of a new job over the
// same input.
type Recoverable = dataflow.Recoverable

// RecoverContext is how a job starts, as Recover sees it.
type RecoverContext = dataflow.RecoverContext

// Counted is an Input that counts something the job's summary reports,
// such as the dead letters of a file source: Counters returns the counts
// so far by name. In a distributed job the counts are summed over the
// processes (Metrics.Counters).
type Counted = dataflow.Counted

// Identified is an Input that says what it reads, for the job's identity:
// a checkpoint records the identity of the job that took it, and a job
// refuses to resume from checkpoints of another, and the processes of a
// distributed job refuse peers that run another. Identity should name
// everything that decides the records the input produces (files in order
// with their sizes, a generator's parameters) and nothing that does not
// (a replay pace, a batch size). An Input that does not implement it is
// identified by its type alone.
type Identified = dataflow.Identified

// Seekable is a Reader that can say where it is and resume from there,
// which checkpoints need: a job that restarts from a checkpoint reopens
// every source with the same SourceContext and seeks each reader to the
// position it had when the checkpoint was taken.
type Seekable = dataflow.Seekable

// Waiter is a Reader whose Read may wait for input (a generator pacing
// itself, a client waiting on a broker): Waited returns the time it has
// waited so far, which the job's figures count as the source waiting
// rather than working.
type Waiter = dataflow.Waiter

// Backlogged is a Reader that knows how many records are waiting for it
// (a broker partition's end less the reader's position, say). A job that
// sizes itself (Autoscale) then sizes for the rate the records arrive at.
type Backlogged = dataflow.Backlogged

// Rescalable is a Seekable reader that can also resume where a run with a
// different number of readers stopped, which restoring a checkpoint with
// another parallelism needs, and moving a running source's shares to
// other instances (Job.Rescale): there the positions are those of the
// readers that read until the move, its Position is asked for at every
// move whether or not the job takes checkpoints, and a reader just
// resumed may be asked for its position before its first Read.
type Rescalable = dataflow.Rescalable

// Acknowledged is a Seekable reader whose input lets go of what was read
// once the job no longer needs it (a JetStream consumer's acks): with
// checkpoints, Acknowledge gets a position once a checkpoint that holds
// it is complete, and the end position of a job that ran to its end in
// every process; without,
// the position at every epoch's end. It may run at the same time as Read
// and after Close; its errors are logged.
type Acknowledged = dataflow.Acknowledged

// Codec encodes records of type T in batches, for a distributed job whose
// records cross processes. Weir has a default for any type without
// channels, functions or interfaces inside: a raw memory copy for types
// without pointers (numbers, bools, arrays and structs of them), else an
// encoder compiled once from the type (strings and slices length-prefixed,
// integers fixed-width). Records of a window's key, value and accumulator
// types cross in the engine's own format, with these codecs for their
// parts. Give a type a codec of your own with RegisterCodec.
type Codec[T any] = dataflow.Codec[T]

// RegisterCodec makes c the codec of T in every job of this process (the
// last registration wins). Every process of a job must register the same.
func RegisterCodec[T any](c Codec[T]) {
	dataflow.RegisterCodec[T](c)
}

// Paced replays in at a steady rate records per second of wall time in
// all, as a real stream arrives: each of the source's instances reads its
// share at rate/instances. A recorded input (a file, say) then behaves
// like a live one, for demonstrations and for tests of recovery and
// latency. The pace starts at the first Read; a reader that falls behind
// catches up without bursts beyond one batch.
func Paced[T any](in Input[T], rate float64) Input[T] {
	return op.Paced[T](in, rate)
}
