package weir

import "github.com/weirstream/weir/internal/engine"

// Job is a dataflow program: build it with Source and the transformation
// functions, then Run it.
type Job = engine.Job

// NewJob returns an empty job.
func NewJob(name string, opts ...JobOption) *Job {
	return engine.NewJob(name, opts...)
}

// Metrics summarises a finished (or running) job.
type Metrics = engine.Metrics
