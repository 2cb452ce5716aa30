package weir

import (
	"crypto/tls"
	"log/slog"
	"time"

	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/state"
)

type jobConfig struct {
	// workers is 0 until Workers gives it or validate picks the default.
	workers      int
	workersSet   bool
	interval     time.Duration
	epochRecords int
	keyGroups    int
	batchSize    int
	queueDepth   int
	onEpoch      func(EpochStats)
	partitioning string
	logger       *slog.Logger
	ordered      bool
	cluster      *clusterConfig
	meshTLS      *tls.Config
	meshTimeout  time.Duration
	ckpt         *ckptConfig
	backend      state.Backend // nil: keyed state in memory
	stopOn       <-chan struct{}
	// As given to Checkpoints and FromCheckpoint; validate checks them.
	ckptEvery, ckptKeep int
	fromCkpt            string
	fromSet             bool
}

func defaultJobConfig() jobConfig {
	return jobConfig{
		interval:   time.Second,
		keyGroups:  partition.DefaultKeyGroups,
		batchSize:  1024,
		queueDepth: 16,
	}
}

// JobOption configures a Job.
type JobOption func(*jobConfig)

// Options record what they are given; Run and Explain check every value
// before anything starts and return an error naming the option for one
// that cannot work.

// Workers sets the default parallelism of every operator, per process: at
// least 1, and the workers of all the processes at most the key groups,
// since a keyed operator has at most one instance per key group (default
// GOMAXPROCS, lowered to what the key groups allow).
func Workers(n int) JobOption { return func(c *jobConfig) { c.workers, c.workersSet = n, true } }

// BatchInterval sets the wall-clock length of an epoch (default 1 s); it
// must be positive.
func BatchInterval(d time.Duration) JobOption { return func(c *jobConfig) { c.interval = d } }

// EpochRecords makes sources cut an epoch every n records per source
// instance instead of by time (0, the default: by time).
func EpochRecords(n int) JobOption { return func(c *jobConfig) { c.epochRecords = n } }

// KeyGroups sets the number of key groups, from 1 to 32768 (default 128).
// It bounds the parallelism of the job: a keyed operator has at most one
// instance per key group, and the job at most KeyGroups workers.
func KeyGroups(k int) JobOption { return func(c *jobConfig) { c.keyGroups = k } }

const maxKeyGroups = 1 << 15

// BatchSize sets how many records an exchange packs into one batch (default
// 1024, at least 1).
func BatchSize(n int) JobOption { return func(c *jobConfig) { c.batchSize = n } }

// QueueDepth sets how many batches an operator instance's inbox holds before
// its senders block (default 16, at least 1).
func QueueDepth(n int) JobOption { return func(c *jobConfig) { c.queueDepth = n } }

// Logger sets where the job logs what it decides while it runs (the
// elastic controller's task changes, say); the default is slog.Default().
func Logger(l *slog.Logger) JobOption { return func(c *jobConfig) { c.logger = l } }

// OnEpoch registers a function called when an epoch has completed at every
// sink. It runs on a runtime goroutine and must be quick.
func OnEpoch(f func(EpochStats)) JobOption { return func(c *jobConfig) { c.onEpoch = f } }

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

type opConfig struct {
	name        string
	parallelism int
	parSet      bool
	state       plan.State
	stateSet    bool
	key         *keySpec
	sel         plan.Selectivity
	selSet      bool
}

// Option configures one operator.
type Option func(*opConfig)

// Name names an operator in plans, metrics and errors.
func Name(s string) Option { return func(c *opConfig) { c.name = s } }

// Parallelism sets the number of instances of an operator: at least 1,
// and for a keyed operator at most the key groups.
func Parallelism(n int) Option { return func(c *opConfig) { c.parallelism, c.parSet = n, true } }

func opOptions(opts []Option) opConfig {
	var c opConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}
