package weir

import (
	"crypto/tls"
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

// KeyedStateIn keeps the keyed state of windows, Process, IntervalJoin,
// InnerJoin, TopN and ArgMax in b instead of in memory (Join's stays in
// memory): for state larger than memory. An instance keeps in memory
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

// Cluster makes the job process self of a distributed job whose processes
// listen at peers (host:port, by process index). Every process runs the
// same program with the same options; each runs Workers instances of
// every parallel operator, so a region's parallelism is Workers times the
// number of processes, and one-instance operators (sinks, say) run on
// process 0. Processes connect to each other directly; none is special.
// Each process listens at its own address in peers, on the addresses of
// its machine that the host resolves to (not on every interface).
// secret must be the same on every process (it is never sent). A
// connection that does not prove the secret is logged and dropped while
// the processes wait for each other (MeshTimeout); a peer that proves it
// but runs a different binary, plan or options fails the job on both
// sides with an error that names the first difference. Partitioning
// strategies pkg and prompt run in one process only.
func Cluster(self int, peers []string, secret string) JobOption {
	return dataflow.Cluster(self, peers, secret)
}

// ElasticCluster makes a distributed job (Cluster) elastic: its peers
// are slots that processes may take; the processes of the first members
// slots start the job, and others may join it while it runs
// (JoinCluster) or leave it (Job.Leave). The keyed operators and sources
// are planned for every slot (Workers instances each); those of a slot
// without a process own nothing. When a process joins, process 0 lets
// it in from an epoch every process can hear of in time, and the key
// groups and source shares spread over the instances present, as a
// batched rescale moves them. Every process, joining ones too, runs the
// same program with the same options and members. Sources must be able
// to move their shares (weir.Rescalable readers), or run only on the
// members' instances.
func ElasticCluster(members int) JobOption {
	return dataflow.ElasticCluster(members)
}

// JoinCluster makes this process of an elastic job (ElasticCluster)
// join it while it runs, asking the first of addrs (host:port of any of
// the job's processes) that answers to let it in. It takes the slot of
// Cluster's self, which no process may hold. Its Run returns once the
// job ends, or once it leaves.
func JoinCluster(addrs ...string) JobOption {
	return dataflow.JoinCluster(addrs...)
}

// ClusterTLS makes the connections of a distributed job mutual TLS 1.3:
// cfg.Certificates[0] is this process's certificate, presented to the
// peers it dials and to those that dial it, and cfg.RootCAs the CA pool
// that every peer's certificate must chain to (a certificate of the
// job's CA admits a process; host names are not checked). A peer without
// such a certificate is dropped like one without the secret, which is
// still proven inside TLS. Weir sets the TLS version and client
// authentication itself. LoadClusterTLS reads cfg from PEM files.
func ClusterTLS(cfg *tls.Config) JobOption {
	return dataflow.ClusterTLS(cfg)
}

// LoadClusterTLS reads the configuration of ClusterTLS from PEM files:
// this process's certificate and key, and the CA certificates. An
// unreadable or invalid file, a key that is not the certificate's, and a
// certificate that is not valid now or not of the CA are refused with an
// error that names the file.
func LoadClusterTLS(certFile, keyFile, caFile string) (*tls.Config, error) {
	return dataflow.LoadClusterTLS(certFile, keyFile, caFile)
}

// MeshTimeout sets how long the processes of a distributed job wait for
// each other to connect (default 30 s); a non-positive d keeps the
// default.
func MeshTimeout(d time.Duration) JobOption {
	return dataflow.MeshTimeout(d)
}

// Checkpoints makes the job save its state every `every` epochs into the
// directory dir (shared by the job's processes), and start from the
// latest complete checkpoint found there. A checkpoint is taken at epoch
// boundaries every process knows in advance: each source records its
// position, and each operator instance saves its state by key group, when
// it passes the first marker at or after a multiple of every; a process
// writes its part once all its tasks have, and the checkpoint is complete
// when every process's part is in (recorded by a manifest). The last keep
// complete checkpoints are kept. dir must not be empty, and every and
// keep must be at least 1.
//
// A job with checkpoints restarts from its latest complete checkpoint with
// exactly-once results: windows, joins, Process, EventTime and outputs
// that implement Checkpointed (Collect does) save their state; readers
// must implement Seekable (every built-in one does). Functions that keep
// state of their own (Stateful, KeyedState, or undeclared) cannot be
// saved: such a job is refused.
//
// FromCheckpoint starts the job from a chosen checkpoint instead.
func Checkpoints(dir string, every, keep int) JobOption {
	return dataflow.Checkpoints(dir, every, keep)
}

// FromCheckpoint starts a job with checkpoints from the checkpoint in
// directory chk (a chk-N directory of some checkpoint directory), which
// may have been taken with other Workers or another number of processes:
// keyed state is redistributed by key group, and sources resume their
// unread records over the new readers (weir.Rescalable). Checkpoints newer
// than it in the job's own checkpoint directory are discarded. It needs
// Checkpoints (given before or after it).
func FromCheckpoint(chk string) JobOption {
	return dataflow.FromCheckpoint(chk)
}

// Checkpointed is an Output whose state is saved in checkpoints, which
// makes it exactly-once: after a restart it holds what it held at the
// checkpoint, and the records after it come again.
type Checkpointed = dataflow.Checkpointed

// TwoPhase is an Output whose writes leave the job as it runs but become
// visible only with the checkpoints that cover them, which makes it
// exactly-once (file.Parts is one). In a job with checkpoints:
//
//   - Prepare(n) seals, durably but not visibly, what was written since
//     the last Prepare, as checkpoint n's; its note is saved in the
//     checkpoint.
//   - Commit(n, note) makes what checkpoints up to n sealed visible, once
//     checkpoint n is complete. After a restart from checkpoint n it is
//     called again with the same n and note, so it must be idempotent.
//   - Recover(n) runs before a job restarted from checkpoint n (0: from
//     the start) writes anything: it discards what was written or sealed
//     after n, which the job is about to write again.
//
// Close (at the end of a job that finished) makes everything visible.
// Without checkpoints, a TwoPhase output is a plain one: what Close makes
// visible is everything.
type TwoPhase = dataflow.TwoPhase

// TimeDomain says which clock a timer or a state time-to-live follows:
// EventTimeDomain (the watermark) or ProcessingTimeDomain (the wall
// clock, read at epoch ends).
type TimeDomain = dataflow.TimeDomain

// The time domains.
const (
	EventTimeDomain      = dataflow.EventTime
	ProcessingTimeDomain = dataflow.ProcessingTime
)

// StateTTL makes an operator's keyed state expire d after it was last
// written, in the given time domain: in event time, a key's state is
// dropped once the watermark passes its last write's event time plus d;
// in processing time, once the wall clock passes its last write plus d.
// Expired state is dropped at epoch ends, and a key whose state expired
// starts again from the zero value. It applies to the operators that keep
// state per key (Process, KeyedProcess, CoProcess, the unwindowed joins);
// d must be at least a millisecond.
func StateTTL(d time.Duration, domain TimeDomain) Option {
	return dataflow.StateTTL(d, domain)
}
