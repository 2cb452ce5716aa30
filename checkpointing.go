package weir

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
)

// Checkpoints makes the job save its state every `every` epochs into the
// directory dir (shared by the job's processes), and start from the
// latest complete checkpoint found there. A checkpoint is taken at epoch
// boundaries every process knows in advance: each source records its
// position, and each operator instance saves its state by key group, when
// it passes the first marker at or after a multiple of every; a process
// writes its part once all its tasks have, and the checkpoint is complete
// when every process's part is in (recorded by a manifest). The last keep
// complete checkpoints are kept (default 3).
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
	return func(c *jobConfig) {
		c.ckpt = &ckptConfig{dir: dir, every: uint64(max(1, every)), keep: max(1, keep)}
		if keep <= 0 {
			c.ckpt.keep = 3
		}
	}
}

type ckptConfig struct {
	dir   string
	every uint64
	keep  int
	fs    checkpoint.FS // nil: the OS's
	from  string        // a checkpoint's directory to start from
}

// FromCheckpoint starts a job with checkpoints from the checkpoint in
// directory chk (a chk-N directory of some checkpoint directory), which
// may have been taken with other Workers or another number of processes:
// keyed state is redistributed by key group, and sources resume their
// unread records over the new readers (weir.Rescalable). Checkpoints newer
// than it in the job's own checkpoint directory are discarded. It needs
// Checkpoints, given before it.
func FromCheckpoint(chk string) JobOption {
	return func(c *jobConfig) {
		if c.ckpt != nil {
			c.ckpt.from = chk
		}
	}
}

// instanceMerger is an instance snapshotter that can take the state of a
// run with another parallelism: all the old instances' states.
type instanceMerger interface {
	restoreInstances(all [][]byte) error
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

// keyedSnapshotter is an operator instance with state by key group.
type keyedSnapshotter interface {
	// snapshotKeyed appends one blob per key group that has state.
	snapshotKeyed(op string, groups int, out []checkpoint.StateBlob) ([]checkpoint.StateBlob, error)
	restoreKeyed(blobs [][]byte) error
}

// instanceSnapshotter is an operator instance with state of its own
// (EventTime's watermark, an output's records).
type instanceSnapshotter interface {
	snapshotInstance() ([]byte, error)
	restoreInstance(data []byte) error
}

// snapEntry is one snapshotter of a task, with the operator's name.
type snapEntry struct {
	op string
	s  any // keyedSnapshotter or instanceSnapshotter
}

type blobKey struct {
	op   string
	inst int // -1 for key-group blobs
	kg   uint32
}

// coordinator gathers a process's part of each checkpoint from its tasks
// and writes it. It is shared by the process's tasks.
type coordinator struct {
	store       *checkpoint.Store
	every       uint64
	keep        int
	self, procs int
	groups      int
	log         *slog.Logger
	from        uint64             // checkpoint restored from (0: none)
	restored    map[blobKey][]byte // its blobs
	instances   map[string]int     // per operator with instance blobs: how many instances saved them
	mu          sync.Mutex
	live        map[*reporter]bool // the tasks that report, until they end
	written     uint64             // the newest checkpoint whose part was written
	storeMu     sync.Mutex         // serializes completing and pruning
	parts       map[uint64]*pendingPart
	waiting     []uint64 // written here, not yet known complete
	// finalState and finalInsts are the final state of this process's
	// tasks that have ended, part of every later checkpoint.
	finalState []checkpoint.StateBlob
	finalInsts []checkpoint.SourceBlob
	// committers are this process's two-phase outputs, with the notes of
	// the checkpoints they prepared that are not committed yet.
	committers []*committer
}

// committer commits one two-phase output's checkpoints as they complete.
type committer struct {
	mu    sync.Mutex
	out   TwoPhase
	notes map[uint64][]byte
}

func (c *committer) snapshotInstance() ([]byte, error) {
	panic("weir: a two-phase output is prepared with its checkpoint's number")
}

func (c *committer) restoreInstance([]byte) error { return nil }

// prepare seals checkpoint n's writes.
func (c *committer) prepare(n uint64) ([]byte, error) {
	note, err := c.out.Prepare(n)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.notes[n] = note
	c.mu.Unlock()
	return note, nil
}

// commit makes checkpoints up to n visible, in order.
func (c *committer) commit(n uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ready []uint64
	for m := range c.notes {
		if m <= n {
			ready = append(ready, m)
		}
	}
	sort.Slice(ready, func(a, b int) bool { return ready[a] < ready[b] })
	for _, m := range ready {
		if err := c.out.Commit(m, c.notes[m]); err != nil {
			return err
		}
		delete(c.notes, m)
	}
	return nil
}

type pendingPart struct {
	part checkpoint.Part
	from map[*reporter]bool // the tasks that reported to it
}

// due returns the checkpoint a reporter whose last checkpoint was *last
// takes at marker m, if any: the highest multiple of every that m reaches
// and *last does not. Every task takes checkpoint n at its first marker at
// or after epoch n, which makes the checkpoints consistent: an aligned
// marker holds back every sender past its own first such marker.
func (c *coordinator) due(last *uint64, m progress.Marker) (uint64, bool) {
	n := uint64(m.Epoch) / c.every * c.every
	if n <= *last || m.Final {
		return 0, false
	}
	*last = n
	return n, true
}

// report adds one task's blobs to checkpoint n; the last of the process's
// tasks writes the part.
func (c *coordinator) report(r *reporter, n uint64, epoch progress.Epoch, state []checkpoint.StateBlob, insts []checkpoint.SourceBlob) error {
	c.mu.Lock()
	if n <= c.written {
		c.mu.Unlock()
		return nil // written without this task, which had ended... or skipped
	}
	p := c.parts[n]
	if p == nil {
		p = &pendingPart{part: checkpoint.Part{Checkpoint: n, Epoch: uint64(epoch), Process: c.self, Processes: c.procs,
			Meta: map[string]string{"key_groups": fmt.Sprint(c.groups)}}, from: map[*reporter]bool{}}
		c.parts[n] = p
	}
	p.part.State = append(p.part.State, state...)
	p.part.Sources = append(p.part.Sources, insts...)
	p.from[r] = true
	ready := c.ready()
	c.mu.Unlock()
	for _, p := range ready {
		if err := c.write(p, epoch); err != nil {
			return err
		}
	}
	return nil
}

// finish takes a task that has ended out of the count of reporters, and
// keeps its final state for every later part.
func (c *coordinator) finish(r *reporter, state []checkpoint.StateBlob, insts []checkpoint.SourceBlob) error {
	c.mu.Lock()
	delete(c.live, r)
	c.finalState = append(c.finalState, state...)
	c.finalInsts = append(c.finalInsts, insts...)
	ready := c.ready()
	c.mu.Unlock()
	for _, p := range ready {
		if err := c.write(p, progress.Epoch(p.part.Epoch)); err != nil {
			return err
		}
	}
	return nil
}

// ready takes the parts every live task has reported to, with the final
// state of the tasks that ended; a part older than one that is ready will
// never be (a task skipped it) and is dropped. The caller holds mu.
func (c *coordinator) ready() []*pendingPart {
	var out []*pendingPart
	var newest uint64
	for n, p := range c.parts {
		all := true
		for r := range c.live {
			all = all && p.from[r]
		}
		if all {
			// A task that reported n and ended since is in the part
			// already, as it was at n.
			have := map[blobKey]bool{}
			for _, b := range p.part.State {
				have[blobKey{op: b.Operator, inst: -1, kg: b.KeyGroup}] = true
			}
			for _, b := range p.part.Sources {
				have[blobKey{op: b.Operator, inst: b.Instance}] = true
			}
			for _, b := range c.finalState {
				if !have[blobKey{op: b.Operator, inst: -1, kg: b.KeyGroup}] {
					p.part.State = append(p.part.State, b)
				}
			}
			for _, b := range c.finalInsts {
				if !have[blobKey{op: b.Operator, inst: b.Instance}] {
					p.part.Sources = append(p.part.Sources, b)
				}
			}
			out = append(out, p)
			delete(c.parts, n)
			newest = max(newest, n)
		}
	}
	for n := range c.parts {
		if n < newest {
			delete(c.parts, n)
		}
	}
	c.written = max(c.written, newest)
	sort.Slice(out, func(a, b int) bool { return out[a].part.Checkpoint < out[b].part.Checkpoint })
	return out
}

// write writes a process's part and completes what it can.
func (c *coordinator) write(p *pendingPart, epoch progress.Epoch) error {
	part := p.part
	sort.Slice(part.State, func(a, b int) bool {
		x, y := part.State[a], part.State[b]
		return x.Operator < y.Operator || x.Operator == y.Operator && x.KeyGroup < y.KeyGroup
	})
	sort.Slice(part.Sources, func(a, b int) bool {
		x, y := part.Sources[a], part.Sources[b]
		return x.Operator < y.Operator || x.Operator == y.Operator && x.Instance < y.Instance
	})
	// Every process's part names the boundary, whatever marker epoch its
	// tasks passed it with: the store checks that the parts agree.
	part.Epoch = part.Checkpoint
	if err := c.store.WritePart(part); err != nil {
		return err
	}
	c.mu.Lock()
	c.waiting = append(c.waiting, part.Checkpoint)
	waiting := append([]uint64(nil), c.waiting...)
	c.mu.Unlock()
	return c.completeWaiting(waiting)
}

// completeWaiting records the checkpoints whose parts are all in, and
// prunes old ones.
func (c *coordinator) completeWaiting(waiting []uint64) error {
	c.storeMu.Lock()
	defer c.storeMu.Unlock()
	done := map[uint64]bool{}
	for _, n := range waiting {
		ok, err := c.store.Complete(n, c.procs)
		if err != nil {
			return err
		}
		if ok {
			done[n] = true
			c.log.Debug("weir: checkpoint complete", "checkpoint", n)
			for _, cm := range c.committers {
				if err := cm.commit(n); err != nil {
					return err
				}
			}
		}
	}
	if len(done) == 0 {
		return nil
	}
	c.mu.Lock()
	rest := c.waiting[:0]
	for _, n := range c.waiting {
		if !done[n] {
			rest = append(rest, n)
		}
	}
	c.waiting = rest
	c.mu.Unlock()
	return c.store.Prune(c.keep)
}

// recoverCommitter registers a two-phase output: it commits what the
// checkpoint the job restored from sealed, and discards what came after.
func (c *coordinator) recoverCommitter(out TwoPhase, op string, inst int) (*committer, error) {
	cm := &committer{out: out, notes: map[uint64][]byte{}}
	if c.from > 0 {
		note, _ := c.restoredInstance(op, inst)
		if err := out.Commit(c.from, note); err != nil {
			return nil, fmt.Errorf("weir: %s: committing checkpoint %d: %w", op, c.from, err)
		}
	}
	if err := out.Recover(c.from); err != nil {
		return nil, fmt.Errorf("weir: %s: recovering at checkpoint %d: %w", op, c.from, err)
	}
	c.mu.Lock()
	c.committers = append(c.committers, cm)
	c.mu.Unlock()
	return cm, nil
}

// restoredKeyed returns the blobs of operator op for the key groups in
// [lo, hi).
func (c *coordinator) restoredKeyed(op string, lo, hi uint32) [][]byte {
	var out [][]byte
	for kg := lo; kg < hi; kg++ {
		if b, ok := c.restored[blobKey{op: op, inst: -1, kg: kg}]; ok {
			out = append(out, b)
		}
	}
	return out
}

// allInstances returns the instance blobs of op, in instance order.
func (c *coordinator) allInstances(op string) [][]byte {
	all := make([][]byte, c.instances[op])
	for i := range all {
		all[i] = c.restored[blobKey{op: op, inst: i}]
	}
	return all
}

func (c *coordinator) restoredInstance(op string, inst int) ([]byte, bool) {
	b, ok := c.restored[blobKey{op: op, inst: inst}]
	return b, ok
}

// reporter takes one task instance's share of each checkpoint: after the
// task has passed a checkpoint's marker, it saves the task's snapshotters
// (and a source's position) and reports them.
type reporter struct {
	c      *coordinator
	last   uint64
	inst   int
	snaps  []snapEntry
	source *sourcePos
}

// sourcePos is how a source task's position is saved.
type sourcePos struct {
	op  string
	pos func() ([]byte, error)
}

func (r *reporter) after(m progress.Marker) error {
	if m.Final {
		// The task is done: its final state goes into every later
		// checkpoint of this process, which no longer waits for it.
		state, insts, err := r.collect(0, true)
		if err != nil {
			return err
		}
		return r.c.finish(r, state, insts)
	}
	n, ok := r.c.due(&r.last, m)
	if !ok {
		return nil
	}
	state, insts, err := r.collect(n, false)
	if err != nil {
		return err
	}
	return r.c.report(r, n, m.Epoch, state, insts)
}

// collect saves the task's state for checkpoint n (or, final, for every
// checkpoint after the task's end: two-phase outputs then have nothing
// left to prepare).
func (r *reporter) collect(n uint64, final bool) ([]checkpoint.StateBlob, []checkpoint.SourceBlob, error) {
	var state []checkpoint.StateBlob
	var insts []checkpoint.SourceBlob
	var err error
	for _, s := range r.snaps {
		switch x := s.s.(type) {
		case *committer:
			if final {
				continue
			}
			data, err := x.prepare(n)
			if err != nil {
				return nil, nil, fmt.Errorf("weir: %s: preparing checkpoint %d: %w", s.op, n, err)
			}
			insts = append(insts, checkpoint.SourceBlob{Operator: s.op, Instance: r.inst, Data: data})
		case keyedSnapshotter:
			if state, err = x.snapshotKeyed(s.op, r.c.groups, state); err != nil {
				return nil, nil, err
			}
		case instanceSnapshotter:
			data, err := x.snapshotInstance()
			if err != nil {
				return nil, nil, fmt.Errorf("weir: %s: saving state: %w", s.op, err)
			}
			insts = append(insts, checkpoint.SourceBlob{Operator: s.op, Instance: r.inst, Data: data})
		}
	}
	if r.source != nil {
		data, err := r.source.pos()
		if err != nil {
			return nil, nil, err
		}
		insts = append(insts, checkpoint.SourceBlob{Operator: r.source.op, Instance: r.inst, Data: data})
	}
	return state, insts, nil
}

// restore gives the task's snapshotters their state from the checkpoint
// the job started from: keyed state of the key groups the instance owns
// (of par instances), instance state by index.
func (r *reporter) restore(par int) error {
	if r.c.restored == nil {
		return nil
	}
	rg := partition.RangeOf(r.inst, r.c.groups, par)
	for _, s := range r.snaps {
		var err error
		switch x := s.s.(type) {
		case *committer:
			continue // recovered when registered
		case keyedSnapshotter:
			err = x.restoreKeyed(r.c.restoredKeyed(s.op, uint32(rg.Start), uint32(rg.End)))
		case instanceSnapshotter:
			if old := r.c.instances[s.op]; old != par && old > 0 {
				m, ok := x.(instanceMerger)
				if !ok {
					return fmt.Errorf("weir: %s#%d: checkpoint %d was taken with %d instances of it, and its state cannot be split over %d", s.op, r.inst, r.c.from, old, par)
				}
				err = m.restoreInstances(r.c.allInstances(s.op))
			} else if data, ok := r.c.restoredInstance(s.op, r.inst); ok {
				err = x.restoreInstance(data)
			}
		}
		if err != nil {
			return fmt.Errorf("weir: %s#%d: restoring checkpoint %d: %w", s.op, r.inst, r.c.from, err)
		}
	}
	return nil
}

// markHook calls after once the task has passed a marker.
type markHook struct {
	runtime.InputTask
	after func(progress.Marker) error
}

func (h *markHook) Mark(m progress.Marker) error {
	if err := h.InputTask.Mark(m); err != nil {
		return err
	}
	return h.after(m)
}

// seqMarkHook is a markHook over a sequenced task.
type seqMarkHook struct {
	*markHook
	seq runtime.SequencedTask
}

func (h seqMarkHook) Next() int { return h.seq.Next() }

func hookMarks(t runtime.InputTask, after func(progress.Marker) error) runtime.InputTask {
	h := &markHook{InputTask: t, after: after}
	if s, ok := t.(runtime.SequencedTask); ok {
		return seqMarkHook{h, s}
	}
	return h
}

// openCheckpoints opens the job's checkpoint store and loads the latest
// complete checkpoint, if any, for process self of procs. Checkpoints
// newer than it (incomplete, from a run that failed) are discarded; this
// happens before the processes connect, so no process of this run has
// written one yet.
func (j *Job) openCheckpoints(self, procs int) (*coordinator, error) {
	cfg := j.cfg.ckpt
	for _, n := range j.nodes {
		if n.userState {
			return nil, fmt.Errorf("weir: %s keeps state of its own, which checkpoints cannot save: declare it Stateless, or keep per-key state with Process", n.name)
		}
	}
	log := j.cfg.logger
	if log == nil {
		log = slog.Default()
	}
	fs := cfg.fs
	if fs == nil {
		fs = checkpoint.OSFS()
	}
	store, err := checkpoint.Open(fs, cfg.dir, log)
	if err != nil {
		return nil, err
	}
	c := &coordinator{store: store, every: cfg.every, keep: cfg.keep, self: self, procs: procs,
		groups: j.cfg.keyGroups, log: log, parts: map[uint64]*pendingPart{}, live: map[*reporter]bool{}}
	n, ok, err := store.Latest()
	if err != nil {
		return nil, err
	}
	from := store
	if cfg.from != "" {
		if n, ok = checkpoint.ParseDir(filepath.Base(cfg.from)); !ok {
			return nil, fmt.Errorf("weir: %s is not a checkpoint directory (chk-N)", cfg.from)
		}
		if from, err = checkpoint.Open(fs, filepath.Dir(cfg.from), log); err != nil {
			return nil, err
		}
	}
	if err := store.DiscardAfter(n); err != nil {
		return nil, err
	}
	if !ok {
		return c, nil
	}
	parts, err := from.ReadAll(n)
	if err != nil {
		return nil, err
	}
	c.from, c.restored = n, map[blobKey][]byte{}
	c.instances = map[string]int{}
	for _, p := range parts {
		if kg := p.Meta["key_groups"]; kg != fmt.Sprint(c.groups) {
			return nil, fmt.Errorf("weir: checkpoint %d in %s was taken with %s key groups; this job has %d", n, from.Dir(), kg, c.groups)
		}
		for _, b := range p.State {
			c.restored[blobKey{op: b.Operator, inst: -1, kg: b.KeyGroup}] = b.Data
		}
		for _, b := range p.Sources {
			c.restored[blobKey{op: b.Operator, inst: b.Instance}] = b.Data
			c.instances[b.Operator] = max(c.instances[b.Operator], b.Instance+1)
		}
	}
	log.Info("weir: restoring checkpoint", "checkpoint", n, "dir", cfg.dir, "parts", len(parts))
	return c, nil
}
