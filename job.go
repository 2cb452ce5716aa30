package weir

import (
	"context"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/engine"
	"github.com/weirstream/weir/internal/metrics"
)

// Job is a dataflow program: build it with Source and the transformation
// functions, then Run it.
type Job struct{ e *engine.Job }

// NewJob returns an empty job.
func NewJob(name string, opts ...JobOption) *Job {
	return &Job{engine.NewJob(name, opts...)}
}

// Run executes the job. It returns when every source has ended and all
// windows have been flushed to the sinks, when an operator fails (with its
// error), or when ctx is cancelled (with ctx's error). A job runs once.
func (j *Job) Run(ctx context.Context) error { return j.e.Run(ctx) }

// Stop asks the running job to stop cleanly: Run then returns ErrStopped.
// With checkpoints, the job runs on until the next checkpoint is complete
// on every process and stops there; without, it stops at once. In a
// distributed job, one process asked to stop stops them all. Stop does
// not wait. A Stop before Run takes effect as soon as the job runs; after
// Run returned, it does nothing.
func (j *Job) Stop() { j.e.Stop() }

// Explain returns the physical plan: tasks, their parallelism, the fused
// operators of each and the exchanges between them.
func (j *Job) Explain() (string, error) { return j.e.Explain() }

// ExplainDot returns the physical plan in Graphviz's dot language.
func (j *Job) ExplainDot() (string, error) { return j.e.ExplainDot() }

// Metrics returns the job's figures so far.
func (j *Job) Metrics() Metrics { return j.e.Metrics() }

// PartitionStats returns the partitioning figures of every keyed
// aggregation of the job, in the order they were added.
func (j *Job) PartitionStats() []PartitionStats { return j.e.PartitionStats() }

// Process returns this process's index in a distributed job (0 in a
// single process): process 0 runs the one-instance operators, such as the
// sinks that write output files.
func (j *Job) Process() int { return j.e.Process() }

// Metrics summarises a finished (or running) job.
type Metrics = engine.Metrics

// Stats returns the whole job as this process sees it: per operator
// instance figures of every process, from the summaries the processes
// exchange at epoch ends. It may be called while the job runs.
func (j *Job) Stats() JobStats { return j.e.Stats() }

// JobStats is a running job's figures: one ProcessStats per process.
type JobStats = metrics.JobStats

// ProcessStats is one process's figures.
type ProcessStats = metrics.ProcessStats

// InstanceStats is one operator instance's figures.
type InstanceStats = metrics.InstanceStats

// ErrStopped is what Run returns after a clean stop (Stop, StopOn). With
// checkpoints, the job stopped right after a checkpoint that every
// process completed (Metrics.StoppedAt), and the next run with the same
// checkpoint directory resumes from it: nothing is lost or repeated in
// exactly-once outputs, and windows are not flushed early. Without
// checkpoints, the job stopped where it was: what exactly-once outputs
// hold is partial, and nothing resumes it.
var ErrStopped = engine.ErrStopped

// LeaveOn makes this process of a distributed job ask to leave it, as
// Job.Leave does, once c is closed or receives: its key groups move to
// the other processes, its instances end and its Run returns nil while
// the others run on. A process that cannot leave (Leave says why) stops
// the whole job cleanly instead, as StopOn does.
func LeaveOn(c <-chan struct{}) JobOption {
	return engine.LeaveOn(c)
}

// StopOn makes the job stop cleanly, as Stop does, once c is closed or
// receives.
func StopOn(c <-chan struct{}) JobOption {
	return engine.StopOn(c)
}

// PartitionStats describes the partitioning of one keyed aggregation over
// the epochs it has seen.
type PartitionStats = dataflow.PartitionStats
