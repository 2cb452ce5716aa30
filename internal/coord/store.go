package coord

import (
	"fmt"
	"maps"
	"slices"

	"github.com/weirstream/weir/internal/checkpoint"
)

// laneState is what the coordinator waits for from the store. One store
// request is outstanding at a time, so that parts are written, checked
// and pruned one after the other, in order.
type laneState int

const (
	laneIdle     laneState = iota
	laneWriting            // WritePart of checkpoint n
	laneChecking           // CheckComplete of asked[next]
	laneProbing            // CheckPart of claims[next]
)

// lane is one round with the store: a part's write, then the completion
// check of every checkpoint waiting, then either the completions' prune
// or the unshared-directory probe.
type lane struct {
	state laneState
	n     uint64
	// asked are the checkpoints waiting when the part was written, done
	// those the store found complete.
	asked, done []uint64
	claims      []claim
	next        int
	missing     []int  // processes whose claimed parts the store lacks
	at          uint64 // the checkpoint the first of them claimed
}

// claim is a peer's part that the store should hold by now.
type claim struct {
	process int
	n       uint64
}

// next asks for the next queued part's write, if the store is free. A
// part of a checkpoint at or before one known complete is not written.
func (c *Coordinator) next() {
	for c.lane.state == laneIdle && len(c.queue) > 0 {
		p := c.queue[0]
		c.queue[0] = checkpoint.Part{} // its blobs go with the WritePart
		c.queue = c.queue[1:]
		if p.Checkpoint <= c.complete {
			continue // stale: it would be pruned at once
		}
		c.lane = lane{state: laneWriting, n: p.Checkpoint}
		c.emit(WritePart{Part: p})
	}
	if len(c.queue) == 0 {
		c.queue = nil
	}
}

func (c *Coordinator) unasked(e Event) error {
	return fmt.Errorf("%w: %T%+v", ErrProtocol, e, e)
}

// partWritten takes the outcome of a part's write: once written, the part
// waits to be complete, and every waiting checkpoint is checked.
func (c *Coordinator) partWritten(e PartWritten) error {
	if c.lane.state != laneWriting || e.N != c.lane.n {
		return c.unasked(e)
	}
	c.lane = lane{}
	if e.Err != nil {
		if !e.Superseded {
			return c.fail(e.Err)
		}
		// Another process completed a later checkpoint and pruned this
		// one while it was written: it is not needed.
		c.next()
		return nil
	}
	c.written = max(c.written, e.N)
	c.waiting = append(c.waiting, e.N)
	c.lane = lane{state: laneChecking, asked: slices.Clone(c.waiting)}
	c.emit(CheckComplete{N: c.lane.asked[0], Processes: c.cfg.Processes})
	return nil
}

// completeChecked takes the store's answer for one waiting checkpoint: a
// complete one is recorded, announced and committed; after the last, the
// complete ones lead to a prune, and none to the unshared probe.
func (c *Coordinator) completeChecked(e CompleteChecked) error {
	l := &c.lane
	if l.state != laneChecking || e.N != l.asked[l.next] {
		return c.unasked(e)
	}
	if e.Err != nil {
		return c.fail(e.Err)
	}
	if e.Complete {
		l.done = append(l.done, e.N)
		c.complete = max(c.complete, e.N)
		c.emit(Completed{N: e.N})
		c.emit(Commit{N: e.N})
	}
	if l.next++; l.next < len(l.asked) {
		c.emit(CheckComplete{N: l.asked[l.next], Processes: c.cfg.Processes})
		return nil
	}
	if len(l.done) == 0 {
		c.probe(l.asked)
		return nil
	}
	// One older than a complete checkpoint will never be needed.
	newest := slices.Max(l.done)
	c.waiting = slices.DeleteFunc(c.waiting, func(n uint64) bool { return n <= newest })
	c.lane = lane{}
	c.emit(Prune{Keep: c.cfg.Keep})
	c.next()
	return nil
}

// unsharedAfter is how many checkpoints after a peer's claimed part this
// process writes before it counts the part as missing.
const unsharedAfter = 3

// probe starts the unshared-directory check, after a round in which no
// checkpoint of asked completed: while no checkpoint has completed in
// this run, it looks in the store for the parts the peers claimed before
// their latest claims, of checkpoints waiting here, once this process
// has written unsharedAfter checkpoints more (they have had time to
// appear).
func (c *Coordinator) probe(asked []uint64) {
	c.lane = lane{}
	if c.complete > c.cfg.From {
		// A checkpoint completed: the processes see each other's parts,
		// if late (a network file system may show a file seconds late).
		c.next()
		return
	}
	var claims []claim
	for _, p := range slices.Sorted(maps.Keys(c.peers.prev)) {
		n := c.peers.prev[p]
		if n > 0 && slices.Contains(asked, n) && c.written >= n+unsharedAfter*c.cfg.Every {
			claims = append(claims, claim{process: p, n: n})
		}
	}
	if len(claims) == 0 {
		c.judge(nil, 0)
		return
	}
	c.lane = lane{state: laneProbing, claims: claims}
	c.emit(CheckPart{N: claims[0].n, Process: claims[0].process})
}

// partChecked takes the store's answer for one claimed part.
func (c *Coordinator) partChecked(e PartChecked) error {
	l := &c.lane
	if l.state != laneProbing || (claim{process: e.Process, n: e.N}) != l.claims[l.next] {
		return c.unasked(e)
	}
	if e.Err != nil {
		return c.fail(e.Err)
	}
	if !e.Has {
		if len(l.missing) == 0 {
			l.at = e.N
		}
		l.missing = append(l.missing, e.Process)
	}
	if l.next++; l.next < len(l.claims) {
		c.emit(CheckPart{N: l.claims[l.next].n, Process: l.claims[l.next].process})
		return nil
	}
	c.judge(l.missing, l.at)
	return nil
}

// judge warns, once, if claimed parts were missing twice in a row, and
// from then on keeps the checkpoints that cannot complete from piling up:
// keep+1 are left, here and in the store.
func (c *Coordinator) judge(missing []int, at uint64) {
	c.lane = lane{}
	u := &c.peers
	switch {
	case u.warned:
	case len(missing) == 0:
		u.seen = 0
		c.next()
		return
	case u.seen < 1:
		u.seen++
		c.next()
		return
	}
	if !u.warned {
		u.warned = true
		c.emit(WarnUnshared{Checkpoint: at, Missing: missing})
	}
	keep := c.cfg.Keep + 1
	if len(c.waiting) > keep {
		c.waiting = slices.Clone(c.waiting[len(c.waiting)-keep:])
	}
	c.emit(TrimIncomplete{Keep: keep})
	c.next()
}

// peers is what the coordinator knows of the other processes' parts.
type peers struct {
	// last and prev are the newest checkpoint each peer said it wrote,
	// and the one it said before.
	last, prev map[int]uint64
	// seen counts the probes in a row that found claimed parts missing;
	// warned is set once the coordinator has warned.
	seen   int
	warned bool
}

// note records the newest checkpoint process p says it wrote its part
// of; the probe checks the one it said the time before, which has had
// time to appear.
func (u *peers) note(p int, written uint64) {
	if u.last == nil {
		u.last, u.prev = map[int]uint64{}, map[int]uint64{}
	}
	if written != u.last[p] {
		u.prev[p], u.last[p] = u.last[p], written
	}
}
