package dataflow

import (
	"crypto/tls"
	"log/slog"
	"reflect"
	"time"

	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/state"
)

type JobConfig struct {
	// Workers is 0 until Workers gives it or validate picks the default.
	Workers      int
	workersSet   bool
	Interval     time.Duration
	EpochRecords int
	KeyGroups    int
	// Active, if positive, is how many instances of each keyed operator
	// own key groups at start (ActiveInstances); the others own none
	// until a rescale gives them some.
	Active       int
	activeSet    bool
	BatchSize    int
	QueueDepth   int
	OnEpoch      func(EpochStats)
	Partitioning string
	Logger       *slog.Logger
	Ordered      bool
	Cluster      *clusterConfig
	MeshTLS      *tls.Config
	MeshTimeout  time.Duration
	Ckpt         *CkptConfig
	// NoCheckpointReuse makes rescales hand every key group over whole
	// (WithoutCheckpointReuse).
	NoCheckpointReuse bool
	// AlwaysDeltas makes a rescale hand a key group over as a delta
	// whenever a checkpoint holds its blob, also when the delta is not
	// smaller or the new owner runs in the same process; tests set it, so
	// that every kind of state is merged.
	AlwaysDeltas bool
	Backend      state.Backend // nil: keyed state in memory
	StopOn       <-chan struct{}
	// LeaveOn, once closed, makes this process ask to leave the job.
	LeaveOn <-chan struct{}
	// Autoscale, if set, sizes the keyed operators while the job runs.
	Autoscale *AutoscaleConfig
	// TraceFile, once TraceSet, is the file the job writes its activity
	// trace to, tracing the whole run.
	TraceFile string
	TraceSet  bool
	// As given to Checkpoints and FromCheckpoint; validate checks them.
	ckptEvery, ckptKeep int
	fromCkpt            string
	fromSet             bool

	// Clock is the processing-time clock of timers and state TTL (nil:
	// the wall clock); tests set one.
	Clock func() time.Time
}

func DefaultJobConfig() JobConfig {
	return JobConfig{
		Interval:   time.Second,
		KeyGroups:  partition.DefaultKeyGroups,
		BatchSize:  1024,
		QueueDepth: 16,
	}
}

// JobOption configures a Job.
type JobOption func(*JobConfig)

// Options record what they are given; Run and Explain check every value
// before anything starts and return an error naming the option for one
// that cannot work.

// Workers sets the default parallelism of every operator, per process: at
// least 1, and the workers of all the processes at most the key groups,
// since a keyed operator has at most one instance per key group (default
// GOMAXPROCS, lowered to what the key groups allow).
func Workers(n int) JobOption { return func(c *JobConfig) { c.Workers, c.workersSet = n, true } }

// ActiveInstances makes the keyed operators start with their key groups
// over their first n instances only (at least 1; all of them if n is as
// many or more); the others own nothing until Job.Rescale gives them key
// groups. An operator's planned instances are the most it can grow to
// while the job runs.
func ActiveInstances(n int) JobOption { return func(c *JobConfig) { c.Active, c.activeSet = n, true } }

// WithoutCheckpointReuse makes the live rescales of a job with checkpoints
// hand every key group's state over whole. By default a key group whose
// blob the latest complete checkpoint holds travels to a new owner in
// another process as a delta on it (what changed since), when that is
// smaller, and the new owner reads the blob from the checkpoint
// directory. It is a setting of the process that hands the key groups
// over; a process takes whatever it is sent.
func WithoutCheckpointReuse() JobOption { return func(c *JobConfig) { c.NoCheckpointReuse = true } }

// BatchInterval sets the wall-clock length of an epoch (default 1 s); it
// must be positive.
func BatchInterval(d time.Duration) JobOption { return func(c *JobConfig) { c.Interval = d } }

// EpochRecords makes sources cut an epoch every n records per source
// instance instead of by time (0, the default: by time).
func EpochRecords(n int) JobOption { return func(c *JobConfig) { c.EpochRecords = n } }

// KeyGroups sets the number of key groups, from 1 to 32768 (default 128).
// It bounds the parallelism of the job: a keyed operator has at most one
// instance per key group, and the job at most KeyGroups workers.
func KeyGroups(k int) JobOption { return func(c *JobConfig) { c.KeyGroups = k } }

const maxKeyGroups = 1 << 15

// BatchSize sets how many records an exchange packs into one batch (default
// 1024, at least 1).
func BatchSize(n int) JobOption { return func(c *JobConfig) { c.BatchSize = n } }

// QueueDepth sets how many batches an operator instance's inbox holds before
// its senders block (default 16, at least 1).
func QueueDepth(n int) JobOption { return func(c *JobConfig) { c.QueueDepth = n } }

// Logger sets where the job logs what it decides while it runs (the
// elastic controller's task changes, say); the default is slog.Default().
func Logger(l *slog.Logger) JobOption { return func(c *JobConfig) { c.Logger = l } }

// OnEpoch registers a function called when an epoch has completed at every
// sink. It runs on a runtime goroutine and must be quick.
func OnEpoch(f func(EpochStats)) JobOption { return func(c *JobConfig) { c.OnEpoch = f } }

// EpochStats describes a completed epoch.
type EpochStats struct {
	Epoch uint64
	// Watermark is the event-time watermark (ms) the epoch ended with, or
	// math.MinInt64 for a job without event time.
	Watermark int64
	// Latency is from the earliest source cut of the epoch to its end at
	// the last sink.
	Latency time.Duration
	// Records is the number of records the sources have read so far.
	Records int64
	Final   bool
}

type OpConfig struct {
	Name        string
	Parallelism int
	ParSet      bool
	State       plan.State
	stateSet    bool
	Key         *KeySpec
	Sel         plan.Selectivity
	SelSet      bool
	// TTL, given by StateTTL, bounds the life of the operator's keyed
	// state; operators without keyed state refuse it.
	TTL TTL
	// Idle, given by IdleAfter, is when an EventTime instance counts as
	// idle; other operators refuse it.
	Idle Idleness
}

// Option configures one operator.
type Option func(*OpConfig)

// Name names an operator in plans, metrics and errors.
func Name(s string) Option { return func(c *OpConfig) { c.Name = s } }

// Parallelism sets the number of instances of an operator: at least 1,
// and for a keyed operator at most the key groups.
func Parallelism(n int) Option { return func(c *OpConfig) { c.Parallelism, c.ParSet = n, true } }

func OpOptions(opts []Option) OpConfig {
	var c OpConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}

// KeySpec is a declared key, typed by the operator's input.
type KeySpec struct {
	Name string
	In   reflect.Type
	// Input makes the keyed input edge from a Stream of the input type.
	Input func(s any, j *Graph) InputEdge
	// Check makes a func(*batch[T]) error that fails records whose key
	// group instance inst of par does not own.
	Check func(j *Graph, view *routing.View, inst int) any
}

// StateBackend keeps the keyed state of windows and Process outside
// memory, in a store per operator instance (package pebblestate gives
// one); KeyedStateIn selects it.
type StateBackend = state.Backend

// KeyedStateIn keeps the keyed state of windows, Process, IntervalJoin,
// InnerJoin, TopN and ArgMax in b instead of in memory (Join's stays in
// memory): for state larger than memory. An instance keeps in memory
// only the keys its current epoch touches, and writes them back at the
// epoch's end; a window firing reads its keys from the store. Checkpoints
// save and restore the state by key group as with the default in-memory
// tables (the stores themselves start empty on every run). Keys, values
// and accumulators must have codecs (see Codec).
func KeyedStateIn(b StateBackend) JobOption {
	return func(c *JobConfig) { c.Backend = b }
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
	return func(c *JobConfig) { c.Partitioning = name }
}
