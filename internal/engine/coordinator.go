package engine

import (
	"fmt"
	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/runtime"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/coord"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/partition"
)

// coordinator is a process's checkpointing: the store, what the run
// restored (read-only once open), the two-phase outputs, and the runtime
// service that owns the checkpoint state machine (internal/coord) and
// carries out its writes, checks and commits off the tasks' data path
// (ckptservice.go).
type coordinator struct {
	store       *checkpoint.Store
	every       uint64
	keep        int
	self, procs int
	groups      int
	log         *slog.Logger
	from        uint64                      // checkpoint restored from (0: none)
	first       uint64                      // on a process that joined: its first epoch
	fromOwn     bool                        // read from store, not another directory
	records     int64                       // records the sources had read by it, over all processes
	restored    map[dataflow.BlobKey][]byte // its blobs
	instances   map[string]int              // per operator with instance blobs: how many instances saved them
	// committers are this process's two-phase outputs, with the notes of
	// the checkpoints they prepared that are not committed yet.
	committers []*committer
	// acks holds the source positions saved for checkpoints not known
	// complete, to acknowledge once they are.
	acks ackBook
	// gone holds, per process that left the job, the first checkpoint
	// it takes no part in (leave.go).
	leftMu sync.Mutex
	gone   map[int]uint64
	// absent holds, per process of an elastic job that has not joined
	// from the start, the first checkpoint it takes part in (notYet
	// until it joins).
	absent map[int]uint64
	// tasks is how many reporters joined (their coord.TaskIDs are 0 to
	// tasks-1); inbox carries their reports and ends, and the peers'
	// claims, to the service until done closes.
	tasks int
	// later holds the reporters that do not take part from the start:
	// by task, the first checkpoint it takes part in (notYet: none until
	// it joins, joinFrom).
	later map[coord.TaskID]uint64
	inbox chan coord.Event
	done  <-chan struct{}
	// served closes once the service has returned: every part it was
	// given is written and checked.
	served chan struct{}
	// onComplete, if set, is called with each checkpoint found complete.
	onComplete func(n uint64)
	// What the service publishes after every step, for the summaries and
	// a stop to read.
	highest, complete, written atomic.Uint64
	pending                    atomic.Int64
	// firstLive is the first checkpoint a live task reports to
	// (coord.FirstLive), MaxUint64 while none is live.
	firstLive atomic.Uint64
	// gate says which due checkpoints the tasks take.
	gate gate
	// reg, if set, receives the checkpoints' figures; meter traces the
	// service's writes.
	reg   *metrics.Registry
	meter *runtime.Meter
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
	c.committers = append(c.committers, cm)
	return cm, nil
}

// lastReported is where the reporters start: the checkpoint restored
// from, or, on a process that joined the job at epoch J, J−1 (the
// checkpoints before J are process 0's to write for it, empty).
func (c *coordinator) lastReported() uint64 {
	if c.first > 0 {
		return max(c.from, c.first-1)
	}
	return c.from
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

// lowestInstances returns, per operator whose name ends in suffix, the
// restored instance blob of its lowest instance that saved one: the
// blobs every instance saves alike (the routing and share tables).
func (c *coordinator) lowestInstances(suffix string) map[string][]byte {
	out := map[string][]byte{}
	low := map[string]int{}
	for k, data := range c.restored {
		if k.Inst < 0 || !strings.HasSuffix(k.Op, suffix) {
			continue
		}
		if i, ok := low[k.Op]; !ok || k.Inst < i {
			low[k.Op], out[k.Op] = k.Inst, data
		}
	}
	return out
}

func (c *coordinator) restoredInstance(op string, inst int) ([]byte, bool) {
	b, ok := c.restored[dataflow.BlobKey{Op: op, Inst: inst}]
	return b, ok
}
