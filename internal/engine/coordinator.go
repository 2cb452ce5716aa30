package engine

import (
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
)

// coordinator gathers a process's part of each checkpoint from its tasks
// and writes it. It is shared by the process's tasks.
type coordinator struct {
	store       *checkpoint.Store
	every       uint64
	keep        int
	self, procs int
	groups      int
	log         *slog.Logger
	from        uint64                      // checkpoint restored from (0: none)
	records     int64                       // records the sources had read by it, over all processes
	restored    map[dataflow.BlobKey][]byte // its blobs
	instances   map[string]int              // per operator with instance blobs: how many instances saved them
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
	// warnedUnshared is set once the job has warned that the other
	// processes' parts do not appear; unsharedSeen counts the checks in a
	// row that found them missing; peerLast and peerPrev are the newest
	// checkpoints each peer said it wrote, and the one before.
	warnedUnshared     bool
	unsharedSeen       int
	peerLast, peerPrev map[int]uint64
	// highest is the newest checkpoint a task of this process reported,
	// complete the newest this process found complete; onComplete, if
	// set, is called with each checkpoint found complete.
	highest, complete uint64
	onComplete        func(n uint64)
}

// progress returns the newest checkpoint a task reported and the newest
// known complete.
func (c *coordinator) progress() (highest, complete uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return max(c.highest, c.from), max(c.complete, c.from)
}

// committer commits one two-phase output's checkpoints as they complete.
type committer struct {
	mu    sync.Mutex
	out   dataflow.TwoPhase
	notes map[uint64][]byte
}

func (c *committer) SnapshotInstance() ([]byte, error) {
	panic("weir: a two-phase output is prepared with its checkpoint's number")
}

func (c *committer) RestoreInstance([]byte) error { return nil }

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

// Report adds one task's blobs to checkpoint n; the last of the process's
// tasks writes the part.
func (c *coordinator) Report(r *reporter, n uint64, epoch progress.Epoch, state []checkpoint.StateBlob, insts []checkpoint.SourceBlob) error {
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
	c.highest = max(c.highest, n)
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
			have := map[dataflow.BlobKey]bool{}
			for _, b := range p.part.State {
				have[dataflow.BlobKey{Op: b.Operator, Inst: -1, Kg: b.KeyGroup}] = true
			}
			for _, b := range p.part.Sources {
				have[dataflow.BlobKey{Op: b.Operator, Inst: b.Instance}] = true
			}
			for _, b := range c.finalState {
				if !have[dataflow.BlobKey{Op: b.Operator, Inst: -1, Kg: b.KeyGroup}] {
					p.part.State = append(p.part.State, b)
				}
			}
			for _, b := range c.finalInsts {
				if !have[dataflow.BlobKey{Op: b.Operator, Inst: b.Instance}] {
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
	// Parts are written one at a time: a part written by a task that
	// ended (finish) may race one written by a live task, and once a
	// later checkpoint is complete an earlier part is pruned, not
	// written.
	c.storeMu.Lock()
	defer c.storeMu.Unlock()
	c.mu.Lock()
	stale := part.Checkpoint <= c.complete
	c.mu.Unlock()
	if stale {
		return nil
	}
	if err := c.store.WritePart(part); err != nil {
		// Another process may have completed a later checkpoint and
		// pruned this one while it was written: then it is not needed.
		if later, lerr := c.store.CompletedAfter(part.Checkpoint); lerr == nil && later {
			c.log.Debug("weir: checkpoint superseded while its part was written", "checkpoint", part.Checkpoint, "err", err)
			return nil
		}
		return err
	}
	c.mu.Lock()
	c.waiting = append(c.waiting, part.Checkpoint)
	waiting := append([]uint64(nil), c.waiting...)
	c.mu.Unlock()
	return c.completeWaiting(waiting)
}

// completeWaiting records the checkpoints whose parts are all in, and
// prunes old ones. The caller holds storeMu.
func (c *coordinator) completeWaiting(waiting []uint64) error {
	done := map[uint64]bool{}
	for _, n := range waiting {
		ok, err := c.store.Complete(n, c.procs)
		if err != nil {
			return err
		}
		if ok {
			done[n] = true
			c.mu.Lock()
			c.complete = max(c.complete, n)
			c.mu.Unlock()
			c.log.Debug("weir: checkpoint complete", "checkpoint", n)
			if c.onComplete != nil {
				c.onComplete(n)
			}
			for _, cm := range c.committers {
				if err := cm.commit(n); err != nil {
					return err
				}
			}
		}
	}
	if len(done) == 0 {
		return c.unshared(waiting)
	}
	c.mu.Lock()
	var newest uint64
	for n := range done {
		newest = max(newest, n)
	}
	rest := c.waiting[:0]
	for _, n := range c.waiting {
		// One older than a complete checkpoint will never be needed.
		if !done[n] && n > newest {
			rest = append(rest, n)
		}
	}
	c.waiting = rest
	c.mu.Unlock()
	return c.store.Prune(c.keep)
}

// recoverCommitter registers a two-phase output: it commits what the
// checkpoint the job restored from sealed, and discards what came after.
func (c *coordinator) recoverCommitter(out dataflow.TwoPhase, op string, inst int) (*committer, error) {
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

// restoredKeyed returns the blobs of operator op for the key groups kgs.
func (c *coordinator) restoredKeyed(op string, kgs []partition.KeyGroup) [][]byte {
	var out [][]byte
	for _, kg := range kgs {
		if b, ok := c.restored[dataflow.BlobKey{Op: op, Inst: -1, Kg: uint32(kg)}]; ok {
			out = append(out, b)
		}
	}
	return out
}

// allInstances returns the instance blobs of op, in instance order.
func (c *coordinator) allInstances(op string) [][]byte {
	all := make([][]byte, c.instances[op])
	for i := range all {
		all[i] = c.restored[dataflow.BlobKey{Op: op, Inst: i}]
	}
	return all
}

func (c *coordinator) restoredInstance(op string, inst int) ([]byte, bool) {
	b, ok := c.restored[dataflow.BlobKey{Op: op, Inst: inst}]
	return b, ok
}

// unshared, called with the checkpoints this process wrote that are not
// complete, warns once if, while no checkpoint has completed in this
// run, a peer said (in its summary, a while ago) that it wrote its part
// of a checkpoint whose directory here holds this process's part but not
// the peer's, twice in a row: the directory is not shared by the
// processes. It then keeps the checkpoints that cannot complete from
// piling up. The caller holds storeMu.
func (c *coordinator) unshared(waiting []uint64) error {
	c.mu.Lock()
	if c.complete > c.from {
		// A checkpoint completed: the processes see each other's parts,
		// if late (a network file system may show a file seconds late).
		c.mu.Unlock()
		return nil
	}
	claims := map[int]uint64{}
	for p, n := range c.peerPrev {
		// A claim counts once this process has written unsharedAfter
		// more checkpoints since: the peer's part has had time to appear.
		if n > 0 && slices.Contains(waiting, n) && c.written >= n+unsharedAfter*c.every {
			claims[p] = n
		}
	}
	c.mu.Unlock()
	var missing []int
	var at uint64
	for p, n := range claims {
		ok, err := c.store.Has(n, p)
		if err != nil {
			return err
		}
		if !ok {
			missing, at = append(missing, p), n
		}
	}
	switch {
	case c.warnedUnshared:
	case len(missing) == 0:
		c.unsharedSeen = 0
		return nil
	case c.unsharedSeen < 1:
		c.unsharedSeen++
		return nil
	}
	if !c.warnedUnshared {
		c.warnedUnshared = true
		sort.Ints(missing)
		c.log.Warn(fmt.Sprintf("weir: no checkpoint can complete: processes %v wrote their parts of checkpoint %d, but %s does not hold them; the checkpoint directory must be shared by every process of the job (a network file system or shared volume), or the job cannot recover", missing, at, c.store.Dir()),
			"process", c.self)
	}
	keep := c.keep + 1
	c.mu.Lock()
	if len(c.waiting) > keep {
		sort.Slice(c.waiting, func(a, b int) bool { return c.waiting[a] < c.waiting[b] })
		c.waiting = append(c.waiting[:0], c.waiting[len(c.waiting)-keep:]...)
	}
	c.mu.Unlock()
	return c.store.TrimIncomplete(keep)
}

// unsharedAfter is how many checkpoints after a peer's claimed part this
// process writes before it counts the part as missing.
const unsharedAfter = 3

// notePeer records the newest checkpoint process p says it wrote its
// part of; unshared checks the one it said the time before, which has had
// time to appear.
func (c *coordinator) notePeer(p int, written uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.peerLast == nil {
		c.peerLast, c.peerPrev = map[int]uint64{}, map[int]uint64{}
	}
	if written != c.peerLast[p] {
		c.peerPrev[p], c.peerLast[p] = c.peerLast[p], written
	}
}

// newestWritten returns the newest checkpoint this process wrote its part
// of.
func (c *coordinator) newestWritten() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.written
}
