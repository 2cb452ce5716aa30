package engine

import "sync"

// gate decides, once for all the tasks of a job of one process with
// time-based epochs, whether they take a checkpoint that is due: not while the store is busy with
// an earlier one (a part waits to be written, or a store request is out),
// as Flink takes one checkpoint at a time. Every checkpoint taken holds a
// copy of the process's state until its part is written; with writes
// slower than the interval between checkpoints, taking each one would
// pile up copies, and the tasks, whose reports wait meanwhile, would
// stall. A checkpoint skipped leaves the next one due to be taken.
//
// In a job of several processes every process takes every checkpoint: a
// checkpoint completes only once each process has written its part, and
// processes that skipped by their own store's pace might never take the
// same one. With count-based epochs every checkpoint is taken too: a
// marker comes only with input, so one skipped while the input pauses
// would have no successor until it resumes (time-based markers follow
// the clock).
type gate struct {
	on    bool // one process, time-based epochs
	every uint64
	mu    sync.Mutex
	// busy is what the checkpoint service last published: whether its
	// state machine waits for the store or holds a part to write.
	busy bool
	// taken holds the decisions of the recent checkpoints.
	taken map[uint64]bool
}

// take reports whether the tasks take checkpoint n, the same answer to
// every task that asks.
func (g *gate) take(n uint64) bool {
	if !g.on {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if v, ok := g.taken[n]; ok {
		return v
	}
	if g.taken == nil {
		g.taken = map[uint64]bool{}
	}
	v := !g.busy
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
