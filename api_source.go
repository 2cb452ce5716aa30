package weir

// Source adds a source to the job.
func Source[T any](j *Job, name string, src Input[T], opts ...Option) Stream[T] {
	return sourceOf(j.graph, name, src, opts...)
}
