package engine

import (
	"sync"

	"github.com/weirstream/weir/internal/coord"
)

// gate decides, once for all the tasks of a process, whether they take a
// checkpoint that is due. In a job of one process with time-based
// epochs: not while the store is busy with
// an earlier one (a part waits to be written, or a store request is out),
// as Flink takes one checkpoint at a time. Every checkpoint taken holds a
// copy of the process's state until its part is written; with writes
// slower than the interval between checkpoints, taking each one would
// pile up copies, and the tasks, whose reports wait meanwhile, would
// stall. A checkpoint skipped leaves the next one due to be taken.
//
// In a job of several processes with time-based epochs (paced) the
// processes take every Stride-th due checkpoint, by a stride the leader
// (process 0 until it leaves) decides from how far the slowest process's
// writes lag and announces ahead (coord.Pace): a checkpoint completes only once each process has
// written its part, and processes that skipped by their own store's pace
// might never take the same one. With count-based epochs every
// checkpoint is taken: a
// marker comes only with input, so one skipped while the input pauses
// would have no successor until it resumes (time-based markers follow
// the clock).
type gate struct {
	on    bool // one process, time-based epochs
	paced bool // several processes, time-based epochs
	every uint64
	mu    sync.Mutex
	// busy is what the checkpoint service last published: whether its
	// state machine waits for the store or holds a part to write.
	busy bool
	// forced, if above 0, is the checkpoint a stop waits for: those at
	// and after it are taken in a job of one process even while the
	// store is busy, so that the stop does not wait for the store to be
	// idle when one is due (with writes about as slow as the interval,
	// many in a row), and in a paced job whatever the stride.
	forced uint64
	// taken holds the decisions of the recent checkpoints.
	taken map[uint64]bool
	// pace is the strides in force (paced). lag gives what the decision
	// after taking checkpoint n reads: whether this process leads n (it
	// decides only then), the newest checkpoint every process has written
	// its part of, and the first epoch a change may take force at.
	pace coord.Pace
	lag  func(n uint64) (leads bool, written, from uint64)
}

// take reports whether the tasks take checkpoint n, the same answer to
// every task that asks.
func (g *gate) take(n uint64) bool {
	if !g.on && !g.paced {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	v, known := g.answer(n)
	if known {
		return v
	}
	if g.taken == nil {
		g.taken = map[uint64]bool{}
	}
	if g.paced && v && g.lag != nil {
		if leads, written, from := g.lag(n); leads {
			g.pace.Decide(n, g.every, written, from) // puts a change in force
		}
	}
	g.taken[n] = v
	for k := range g.taken {
		// A task asks of the checkpoints in increasing order, and no
		// task lags this far behind another.
		if k+maxGateLag*g.every < n {
			delete(g.taken, k)
		}
	}
	return v
}

// peek reports whether the tasks take checkpoint n, as take would, but
// without recording the answer or deciding a stride: for a process whose
// tasks do not ask (idle_parts.go), which must not change what they, or
// the leader's decisions, will find.
func (g *gate) peek(n uint64) bool {
	if !g.on && !g.paced {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	v, _ := g.answer(n)
	return v
}

// answer is the decision recorded for checkpoint n (known), or the one
// the gate makes of it now. g.mu is held.
func (g *gate) answer(n uint64) (v, known bool) {
	if v, ok := g.taken[n]; ok {
		return v, true
	}
	forced := g.forced > 0 && n >= g.forced
	if g.paced {
		// Each process forces its own proposal and the job stops at the
		// highest, so every process takes that one.
		return g.pace.Takes(n, g.every) || forced, false
	}
	return !g.busy || forced, false
}

// maxGateLag is how many checkpoints back the gate remembers its
// decisions.
const maxGateLag = 64

// setBusy records whether the service waits for the store or holds a
// part to write.
func (g *gate) setBusy(busy bool) {
	g.mu.Lock()
	g.busy = busy
	g.mu.Unlock()
}

// paceStep is the newest stride step this process knows.
func (g *gate) paceStep() coord.PaceStep {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pace.Last()
}

// hearPace puts in force a stride step the leader announced.
func (g *gate) hearPace(s coord.PaceStep) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pace.Add(s)
}

// force makes the gate take checkpoint n and those due after it, whatever
// the store is doing or the stride: a stop waits for it.
func (g *gate) force(n uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.forced = n
}
