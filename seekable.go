package weir

import "github.com/weirstream/weir/internal/dataflow"

// Seekable is a Reader that can say where it is and resume from there,
// which checkpoints need: a job that restarts from a checkpoint reopens
// every source with the same SourceContext and seeks each reader to the
// position it had when the checkpoint was taken.
type Seekable = dataflow.Seekable

// Rescalable is a Seekable reader that can also resume where a run with a
// different number of readers stopped, which restoring a checkpoint with
// another parallelism needs.
type Rescalable = dataflow.Rescalable
