package weir

import (
	"log/slog"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
)

// JobOption configures a Job.
type JobOption = dataflow.JobOption

// Workers sets the default parallelism of every operator, per process: at
// least 1, and the workers of all the processes at most the key groups,
// since a keyed operator has at most one instance per key group (default
// GOMAXPROCS, lowered to what the key groups allow).
func Workers(n int) JobOption {
	return dataflow.Workers(n)
}

// BatchInterval sets the wall-clock length of an epoch (default 1 s); it
// must be positive.
func BatchInterval(d time.Duration) JobOption {
	return dataflow.BatchInterval(d)
}

// EpochRecords makes sources cut an epoch every n records per source
// instance instead of by time (0, the default: by time).
func EpochRecords(n int) JobOption {
	return dataflow.EpochRecords(n)
}

// KeyGroups sets the number of key groups, from 1 to 32768 (default 128).
// It bounds the parallelism of the job: a keyed operator has at most one
// instance per key group, and the job at most KeyGroups workers.
func KeyGroups(k int) JobOption {
	return dataflow.KeyGroups(k)
}

// BatchSize sets how many records an exchange packs into one batch (default
// 1024, at least 1).
func BatchSize(n int) JobOption {
	return dataflow.BatchSize(n)
}

// QueueDepth sets how many batches an operator instance's inbox holds before
// its senders block (default 16, at least 1).
func QueueDepth(n int) JobOption {
	return dataflow.QueueDepth(n)
}

// Logger sets where the job logs what it decides while it runs (the
// elastic controller's task changes, say); the default is slog.Default().
func Logger(l *slog.Logger) JobOption {
	return dataflow.Logger(l)
}

// OnEpoch registers a function called when an epoch has completed at every
// sink. It runs on a runtime goroutine and must be quick.
func OnEpoch(f func(EpochStats)) JobOption {
	return dataflow.OnEpoch(f)
}

// EpochStats describes a completed epoch.
type EpochStats = dataflow.EpochStats

// Option configures one operator.
type Option = dataflow.Option

// Name names an operator in plans, metrics and errors.
func Name(s string) Option {
	return dataflow.Name(s)
}

// Parallelism sets the number of instances of an operator: at least 1,
// and for a keyed operator at most the key groups.
func Parallelism(n int) Option {
	return dataflow.Parallelism(n)
}

// StateBackend keeps the keyed state of windows and Process outside
// memory, in a store per operator instance (package pebblestate gives
// one); KeyedStateIn selects it.
type StateBackend = dataflow.StateBackend

// KeyedStateIn keeps the keyed state of windows and Process in b instead
// of in memory: for state larger than memory. An instance keeps in memory
// only the keys its current epoch touches, and writes them back at the
// epoch's end; a window firing reads its keys from the store. Checkpoints
// save and restore the state by key group as with the default in-memory
// tables (the stores themselves start empty on every run). Keys, values
// and accumulators must have codecs (see Codec).
func KeyedStateIn(b StateBackend) JobOption {
	return dataflow.KeyedStateIn(b)
}

// Partitioning chooses how keyed aggregations partition the records of
// each epoch:
//
//   - "hash": every key whole at the owner of its key group, which folds
//     the raw records (Flink's keyBy, Spark's hash partitioning);
//   - "roundrobin": each sender pre-aggregates the records that reached it
//     (blocks cut by arrival, as Spark Streaming's time-based blocks) and
//     sends partials to the key's owner;
//   - "pkg": partial key grouping: each record goes to the less loaded of
//     its key's two candidate map tasks, which pre-aggregate;
//   - "prompt": Prompt's frequency-aware partitioning: map blocks balanced
//     in records and distinct keys with hot keys split, load-aware
//     reducers, and a task count that follows the load;
//   - "auto" (the default): roundrobin, which costs least per record on
//     one machine, where sources already spread records evenly over the
//     senders (see weir bench skew).
//
// Strategies other than hash need an aggregator with Merge and a window
// other than Session; other aggregations use hash. An unknown name is an
// error from Run.
func Partitioning(name string) JobOption {
	return dataflow.Partitioning(name)
}
