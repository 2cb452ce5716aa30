package weir

import (
	"crypto/tls"
	"log/slog"
	"runtime"
	"time"

	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/plan"
)

type jobConfig struct {
	workers      int
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
	pebbleDir    string
	stopOn       <-chan struct{}
}

func defaultJobConfig() jobConfig {
	return jobConfig{
		workers:    runtime.GOMAXPROCS(0),
		interval:   time.Second,
		keyGroups:  partition.DefaultKeyGroups,
		batchSize:  1024,
		queueDepth: 16,
	}
}

// JobOption configures a Job.
type JobOption func(*jobConfig)

// Workers sets the default parallelism of every operator (default
// GOMAXPROCS).
func Workers(n int) JobOption { return func(c *jobConfig) { c.workers = max(1, n) } }

// BatchInterval sets the wall-clock length of an epoch (default 1 s); a
// non-positive d keeps the default.
func BatchInterval(d time.Duration) JobOption {
	return func(c *jobConfig) {
		if d > 0 {
			c.interval = d
		}
	}
}

// EpochRecords makes sources cut an epoch every n records per source
// instance instead of by time.
func EpochRecords(n int) JobOption { return func(c *jobConfig) { c.epochRecords = n } }

// KeyGroups sets the number of key groups (default 128, at most 32768). It
// bounds the parallelism of keyed operators.
func KeyGroups(k int) JobOption {
	return func(c *jobConfig) { c.keyGroups = min(max(1, k), maxKeyGroups) }
}

const maxKeyGroups = 1 << 15

// BatchSize sets how many records an exchange packs into one batch (default
// 1024).
func BatchSize(n int) JobOption { return func(c *jobConfig) { c.batchSize = max(1, n) } }

// QueueDepth sets how many batches an operator instance's inbox holds before
// its senders block (default 16).
func QueueDepth(n int) JobOption { return func(c *jobConfig) { c.queueDepth = max(1, n) } }

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

// Parallelism sets the number of instances of an operator.
func Parallelism(n int) Option { return func(c *opConfig) { c.parallelism = max(1, n) } }

func opOptions(opts []Option) opConfig {
	var c opConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}
