package weir

import (
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/engine"
	"github.com/weirstream/weir/internal/op"
)

// Source adds a source to the job.
func Source[T any](j *engine.Job, name string, src dataflow.Input[T], opts ...dataflow.Option) op.Stream[T] {
	return op.SourceOf(j.Graph, name, src, opts...)
}
