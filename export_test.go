package weir

import (
	"time"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/transport"
)

// WithNetwork makes the job one process of a distributed job over n,
// instead of dialling peers (tests run several processes in one).
func WithNetwork(n transport.Network) JobOption { return dataflow.WithNetwork(n) }

// WithClock makes f the job's processing-time clock (timers, state TTL).
func WithClock(f func() time.Time) JobOption {
	return func(c *dataflow.JobConfig) { c.Clock = f }
}

// AlwaysDeltas makes the job's rescales hand a key group over as a delta
// on the latest complete checkpoint whenever it holds the key group's
// blob, also when the delta is not smaller or stays in the process.
func AlwaysDeltas() JobOption {
	return func(c *dataflow.JobConfig) { c.AlwaysDeltas = true }
}

// DeltasSent is the blobs this process handed over as deltas, by operator.
func DeltasSent(j *Job) map[string]int64 { return j.e.RescaleFigures().Deltas }

// MoveSplits moves the shares of source name while j runs: from the epoch
// of the returned migration, instance readers[i] reads share i of
// len(readers).
func MoveSplits(j *Job, name string, readers []int) (*Migration, error) {
	e, err := j.e.MoveSplits(name, readers)
	if err != nil {
		return nil, err
	}
	return &Migration{First: e, Last: e, Steps: 1, Sources: []string{name}, job: j.e}, nil
}

// CheckpointFS makes the job's checkpoints (given before it) go through
// fs.
func CheckpointFS(fs checkpoint.FS) JobOption {
	return func(c *dataflow.JobConfig) {
		if c.Ckpt != nil {
			c.Ckpt.Fs = fs
		}
	}
}

// CheckpointStride is the stride of j's checkpoints this process knows.
func CheckpointStride(j *Job) uint64 { return j.e.CheckpointStride() }
