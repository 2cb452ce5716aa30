package weir

import (
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/metrics"
)

// TraceFile makes the job record its workers' activities for the whole
// run and write them to the file at path (created, or truncated), which
// is flushed and closed when Run returns, also after an error. `weir
// trace analyze` reads it. In a job of several processes each process
// needs a file of its own. Tracing costs throughput while it is on.
func TraceFile(path string) JobOption {
	return func(c *dataflow.JobConfig) { c.TraceFile, c.TraceSet = path, true }
}

// TraceFor switches tracing on for d while the job runs (without
// TraceFile, only the online analysis sees the events): Stats' Critical
// then holds the critical participation of a recent window of this
// process's workers. It returns an error if d is not positive or the job
// is not running.
func (j *Job) TraceFor(d time.Duration) error { return j.e.TraceFor(d) }

// Tracing reports whether the job records its activities now.
func (j *Job) Tracing() bool { return j.e.Tracing() }

// Participation is one row of a critical-participation summary (see
// JobStats.Critical).
type Participation = metrics.Participation
