// Package engine runs a job: it plans the graph (internal/plan), makes
// the operator instances and exchanges of this process's tasks on the
// runtime (instantiate.go), connects the processes of a distributed job
// over the transport, takes checkpoints (reporter.go collects a task's
// state, ckptservice.go runs internal/coord's state machine as a runtime
// service, coordinator.go holds what was restored and the two-phase
// outputs) and owns the checkpoint directory, exchanges summaries,
// carries the micro-batch rounds' posts between processes
// (rounds_net.go),
// reshapes the running job: key groups move between the keyed instances
// with their state (rescale.go plans and announces, handover.go moves,
// post.go carries it within and between processes, reuse.go sends a key
// group to another process as a delta on its blob in the newest complete
// checkpoint when that is smaller), keyed instances start and end with
// their key groups (lives.go, lives_plan.go, pumps.go; a process whose
// instances all wait still writes its checkpoint parts, idle_parts.go),
// the sources' shares between their instances with their readers'
// positions (splits*.go), a process leaves (leave.go; process 0 too,
// when no operator runs on it alone: the lowest process taking part
// then leads the checkpoints, pace.go) or joins (join.go, bootstrap.go;
// the process present longest admits it, admit.go); it sizes the keyed
// operators of a job that autoscales, with every process deciding alike
// from the same frozen figures (autoscale*.go over internal/agree; a
// decision's rescale places key groups by load, rescale_placed.go); and
// it stops the job cleanly. Job is what the root
// package's NewJob returns.
package engine
