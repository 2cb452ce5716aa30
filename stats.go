package weir

import "github.com/weirstream/weir/internal/metrics"

// The figures Job.Stats gives besides JobStats, ProcessStats and
// InstanceStats (job.go). JobStats.Operators() aggregates the instances
// by operator chain with DS2's rates; JobStats.Loads() sums the records
// per key group over the processes; DeltaJob turns two snapshots into
// the figures of the interval between them.
type (
	// OperatorStats is one operator chain's figures over all its
	// instances, with its rates.
	OperatorStats = metrics.OperatorStats
	// Rates are DS2's rates in records per second: true processing and
	// output rates per second of useful time, observed rates per second
	// of wall time.
	Rates = metrics.Rates
	// PeerStats is a process's traffic with one peer.
	PeerStats = metrics.PeerStats
	// CheckpointStats is one checkpoint as one process took it.
	CheckpointStats = metrics.CheckpointStats
	// LatencyStats summarises a process's epoch latencies.
	LatencyStats = metrics.LatencyStats
	// KeyGroupLoad is the records sent to each key group of one keyed
	// operator.
	KeyGroupLoad = metrics.KeyGroupLoad
)

// DeltaJob returns what every instance of cur did since prev, an earlier
// Stats of the same job: the counters' differences, and Lifetime the wall
// time between the two, so that Rates and Operators give the rates of
// that interval.
func DeltaJob(prev, cur JobStats) JobStats { return metrics.DeltaJob(prev, cur) }

// Operators aggregates instances by operator chain, in name order.
func Operators(insts []InstanceStats) []OperatorStats { return metrics.Operators(insts) }
