package engine

import "github.com/weirstream/weir/internal/coord"

// setGate sets c's gate: one at a time in a job of one process, paced
// in a job of several, every checkpoint with count-based epochs.
func (j *Job) setGate(c *coordinator) {
	timed := j.Cfg.EpochRecords == 0
	c.gate = gate{on: c.procs == 1 && timed, paced: c.procs > 1 && timed, every: c.every}
	if c.gate.paced {
		c.gate.lag = j.paceLag(c)
	}
}

// paceLag is what the leader of checkpoint n (leads) decides the stride
// of a paced job's checkpoints from (gate.lag): whether this process
// leads n, the newest checkpoint that every process
// has written its part of, by its own store and the others' summaries
// (a process that has ended, left by n, is absent or has not been heard
// from yet left out), and the first epoch a change may take force at:
// the rescale's lead after checkpoint n or the clock's epoch, whichever
// is later (the task that asks may trail the clock), so that the others
// hear of it before they reach it.
func (j *Job) paceLag(c *coordinator) func(n uint64) (leads bool, written, from uint64) {
	lead := j.lead()
	return func(n uint64) (bool, uint64, uint64) {
		if c.leader(n) != c.self {
			return false, 0, 0
		}
		written := c.newestWritten()
		j.mu.Lock()
		x, rt := j.summaries, j.rt
		j.mu.Unlock()
		now := n
		if rt != nil {
			now = max(now, uint64(rt.WallEpoch()))
		}
		if x == nil {
			return true, written, now + lead
		}
		b := x.Board()
		for p := range j.Processes() {
			if m, ok := b.Latest(p); ok && p != c.self && !m.Final && c.takesPart(p, n) {
				written = min(written, m.Written)
			}
		}
		return true, written, now + lead
	}
}

// takesPart says whether process p writes its own part of checkpoint n
// (it is not away then).
func (c *coordinator) takesPart(p int, n uint64) bool {
	c.leftMu.Lock()
	defer c.leftMu.Unlock()
	return !c.away(p, n)
}

// leader is the process that decides for checkpoint n what one process
// does for all (the stride after it, the parts of the processes away
// from it): the lowest one that takes part in it. Process 0, until it
// leaves the job.
func (c *coordinator) leader(n uint64) int {
	c.leftMu.Lock()
	defer c.leftMu.Unlock()
	for p := range c.procs {
		if !c.away(p, n) {
			return p
		}
	}
	return 0
}

// hearPace puts in force a stride step a peer announced: every process
// passes on the newest it knows, so that a step the leader decided just
// before it left reaches every process, whichever it heard it from.
func (c *coordinator) hearPace(at, stride uint64) {
	if at > 0 && stride > 0 && c.gate.paced {
		c.gate.hearPace(coord.PaceStep{From: at, Stride: stride})
	}
}

// CheckpointStride is the stride of the checkpoints in force for the
// newest step this process knows (1 in a job that is not paced).
func (j *Job) CheckpointStride() uint64 {
	if j.coord == nil || !j.coord.gate.paced {
		return 1
	}
	return j.coord.gate.paceStep().Stride
}
