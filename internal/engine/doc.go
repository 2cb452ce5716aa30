// Package engine runs a job: it plans the graph (internal/plan), makes
// the operator instances and exchanges of this process's tasks on the
// runtime (instantiate.go), connects the processes of a distributed job
// over the transport, coordinates checkpoints (coordinator.go,
// reporter.go) and owns the checkpoint directory, exchanges summaries,
// and stops the job cleanly. Job is what the root package's NewJob
// returns.
package engine
