// Package engine runs a job: it plans the graph (internal/plan), makes
// the operator instances and exchanges of this process's tasks on the
// runtime (instantiate.go), connects the processes of a distributed job
// over the transport, takes checkpoints (reporter.go collects a task's
// state, ckptservice.go runs internal/coord's state machine as a runtime
// service, coordinator.go holds what was restored and the two-phase
// outputs) and owns the checkpoint directory, exchanges summaries,
// and stops the job cleanly. While the job runs it rescales it: key
// groups move between the keyed instances with their state (rescale.go,
// handover.go, post.go), and the sources' shares between their
// instances with their readers' positions (splits*.go). Job is what the
// root package's NewJob returns.
package engine
