package engine

import (
	"sync/atomic"

	"github.com/weirstream/weir/internal/coord"
)

// A process of a job of several may have no task instance that takes
// part for a while: its keyed instances all wait to be joined (they own
// no key group), and its other tasks ended or run elsewhere. Its tasks
// then report to no checkpoint, and without its part none would
// complete. So at each summary it sends, a process with checkpoints and
// instances that live by their key groups tells its checkpoint service
// the newest checkpoint that has passed (coord.Passed): one whose epoch
// the clock has passed, that the tasks take (the gate, which follows the
// stride of a paced job), and that comes before the first checkpoint a
// live task reports to (the service publishes it: coord.FirstLive). The
// service writes that part from the ended tasks' final state alone if
// still no live task reports to it, and does nothing otherwise.
//
// A joining instance's first checkpoint (coord.Join) is sent before its
// join is checked in time (and withdrawn if it is not), and a checkpoint
// passes only while no plan that may set joins is under way
// (idleParts.joining): such a plan counts itself in before it checks
// that its joins come in time, and out once it is over. A join whose
// first checkpoint the clock, read before the count, has passed was so
// checked before that read: its Join reached the service before Passed.

// idleParts is what tells the checkpoint service which checkpoints have
// passed.
type idleParts struct {
	// joining counts the plans that may set joins and are not over.
	joining atomic.Int64
	// passed is the newest checkpoint said to have passed.
	passed atomic.Uint64
}

// settingJoins counts a plan that may set joins in, until the function it
// returns is called, once it is over.
func (j *Job) settingJoins() func() {
	j.idle.joining.Add(1)
	return func() { j.idle.joining.Add(-1) }
}

// passIdle tells the checkpoint service which checkpoints have passed,
// while no live task of this process reports to them: those the tasks
// take (the gate's answer, peeked: it neither records it nor decides a
// stride). It never waits for the service: a full inbox (a long write)
// leaves the checkpoint to the next summary.
func (j *Job) passIdle() {
	c := j.coord
	j.rescale.mu.Lock()
	lives := len(j.rescale.lives.tasks) > 0
	j.rescale.mu.Unlock()
	j.mu.Lock()
	rt := j.rt
	j.mu.Unlock()
	if c == nil || c.every == 0 || !lives || rt == nil || j.Cfg.EpochRecords > 0 {
		return
	}
	wall := uint64(rt.WallEpoch()) // before the joins are counted
	if j.idle.joining.Load() > 0 || wall == 0 {
		return
	}
	last := (wall - 1) / c.every * c.every // its epoch ended
	first := max(j.idle.passed.Load()+c.every, last-min(last, maxGateLag*c.every))
	var newest uint64
	for n := first; n <= last && n > 0 && n < c.firstLive.Load(); n += c.every {
		if c.gate.peek(n) {
			newest = n
		}
	}
	if newest > 0 && c.trySend(coord.Passed{N: newest}) {
		j.idle.passed.Store(newest)
	}
}
