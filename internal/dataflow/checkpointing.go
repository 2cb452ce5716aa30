package dataflow

import "github.com/weirstream/weir/internal/checkpoint"

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
	return func(c *JobConfig) {
		c.Ckpt = &CkptConfig{Dir: dir, Every: uint64(max(1, every)), Keep: max(1, keep)}
		c.ckptEvery, c.ckptKeep = every, keep
	}
}

type CkptConfig struct {
	Dir   string
	Every uint64
	Keep  int
	Fs    checkpoint.FS // nil: the OS's
	From  string        // a checkpoint's directory to start from
}

// FromCheckpoint starts a job with checkpoints from the checkpoint in
// directory chk (a chk-N directory of some checkpoint directory), which
// may have been taken with other Workers or another number of processes:
// keyed state is redistributed by key group, and sources resume their
// unread records over the new readers (weir.Rescalable). Checkpoints newer
// than it in the job's own checkpoint directory are discarded. It needs
// Checkpoints (given before or after it).
func FromCheckpoint(chk string) JobOption {
	return func(c *JobConfig) { c.fromCkpt, c.fromSet = chk, true }
}

// InstanceMerger is an instance snapshotter that can take the state of a
// run with another parallelism: all the old instances' states.
type InstanceMerger interface {
	RestoreInstances(all [][]byte) error
}

// Checkpointed is an Output whose state is saved in checkpoints, which
// makes it exactly-once: after a restart it holds what it held at the
// checkpoint, and the records after it come again.
type Checkpointed interface {
	Snapshot() ([]byte, error)
	Restore(data []byte) error
}

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
type TwoPhase interface {
	Prepare(n uint64) ([]byte, error)
	Commit(n uint64, note []byte) error
	Recover(n uint64) error
}

// KeyedSnapshotter is an operator instance with state by key group.
type KeyedSnapshotter interface {
	// SnapshotKeyed appends one blob per key group that has state.
	SnapshotKeyed(op string, groups int, out []checkpoint.StateBlob) ([]checkpoint.StateBlob, error)
	RestoreKeyed(blobs [][]byte) error
}

// KeyedMover is a keyed snapshotter whose key groups can leave it while
// the job runs: ExtractKeyed appends one blob per key group that take
// selects and that has state, like SnapshotKeyed, and drops that state
// (keys, windows, timers) from the instance. The key groups' new owner
// adds the blobs with RestoreKeyed, which adds to what it holds. Both run
// on the instance's goroutine, at an epoch's end.
type KeyedMover interface {
	KeyedSnapshotter
	ExtractKeyed(op string, groups int, take func(kg uint32) bool, out []checkpoint.StateBlob) ([]checkpoint.StateBlob, error)
}

// DeltaMover is a KeyedMover whose key groups can also leave it as deltas
// on a checkpoint (checkpoint reuse): DeltaKeyed returns what turns base,
// the key group's blob in a complete checkpoint, into cur, the blob
// ExtractKeyed returned for it (the keys new or whose value's encoding
// differs, the keys gone, the watermark); MergeKeyed, on the new owner,
// turns base and that delta back into a blob with cur's entries (in an
// order of its own), for RestoreKeyed. Both are functions of their
// arguments.
type DeltaMover interface {
	KeyedMover
	DeltaKeyed(base, cur []byte) ([]byte, error)
	MergeKeyed(base, delta []byte) ([]byte, error)
}

// InstanceSnapshotter is an operator instance with state of its own
// (EventTime's watermark, an output's records).
type InstanceSnapshotter interface {
	SnapshotInstance() ([]byte, error)
	RestoreInstance(data []byte) error
}

// SnapEntry is one snapshotter of a task, with the operator's name.
type SnapEntry struct {
	Op string
	S  any // keyedSnapshotter or instanceSnapshotter
}

type BlobKey struct {
	Op   string
	Inst int // -1 for key-group blobs
	Kg   uint32
}
