package engine

import (
	"errors"
	"sync"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/summary"
)

// ErrStopped is what Run returns after a clean stop (Stop, StopOn). With
// checkpoints, the job stopped right after a checkpoint that every
// process completed (Metrics.StoppedAt), and the next run with the same
// checkpoint directory resumes from it: nothing is lost or repeated in
// exactly-once outputs, and windows are not flushed early. Without
// checkpoints, the job stopped where it was: what exactly-once outputs
// hold is partial, and nothing resumes it.
var ErrStopped = errors.New("weir: job stopped")

// StopOn makes the job stop cleanly, as Stop does, once c is closed or
// receives.
func StopOn(c <-chan struct{}) dataflow.JobOption {
	return func(cfg *dataflow.JobConfig) { cfg.StopOn = c }
}

// LeaveOn makes this process of a distributed job ask to leave it, as
// Leave does, once c is closed or receives; a process that cannot leave
// (Leave refuses) stops the job cleanly instead, saying why.
func LeaveOn(c <-chan struct{}) dataflow.JobOption {
	return func(cfg *dataflow.JobConfig) { cfg.LeaveOn = c }
}

// stopper carries out a clean stop: the processes of a job agree on the
// checkpoint to stop at, over their summaries, and each stops once that
// checkpoint (or a later one) is complete.
type stopper struct {
	mu        sync.Mutex
	requested bool   // this process was asked to stop, or a peer was
	proposal  uint64 // the checkpoint this process proposes to stop at
	ended     bool
	at        uint64 // the checkpoint it stopped at
	// finished is set once this process has sent its final summary and
	// closed the network after the stop.
	finished bool
}

// Stop asks the running job to stop cleanly: Run then returns ErrStopped.
// With checkpoints, the job runs on until the next checkpoint is complete
// on every process and stops there; without, it stops at once. In a
// distributed job, one process asked to stop stops them all. Stop does
// not wait. A Stop before Run takes effect as soon as the job runs; after
// Run returned, it does nothing.
func (j *Job) Stop() {
	j.stop.mu.Lock()
	j.stop.requested = true
	j.stop.mu.Unlock()
	j.checkStop()
}

// checkStop moves a requested stop on: it makes this process's proposal,
// and stops once every process has proposed and a checkpoint at or
// after the highest proposal is complete.
func (j *Job) checkStop() {
	j.mu.Lock()
	rt, x := j.rt, j.summaries
	j.mu.Unlock()
	if rt == nil || x == nil && j.Processes() > 1 {
		return // Run calls again once it can stop the job
	}
	s := &j.stop
	s.mu.Lock()
	defer s.mu.Unlock()
	if x != nil && !s.requested && x.Board().Stopping() {
		s.requested = true
	}
	if !s.requested || s.ended {
		return
	}
	var highest, complete uint64
	if j.coord != nil {
		highest, complete = j.coord.progress()
		if s.proposal == 0 {
			s.proposal = (highest/j.coord.every + 1) * j.coord.every
			j.coord.gate.force(s.proposal)
			j.Logger().Info("weir: stopping after the next checkpoint", "checkpoint", s.proposal)
		}
	}
	target := s.proposal
	if x != nil {
		x.Kick()
		at, all := x.Board().StopAt(j.Process())
		if !all {
			return
		}
		target = max(target, at)
		complete = max(complete, x.Board().Complete())
	}
	if j.coord != nil && complete < target {
		return
	}
	s.ended, s.at = true, 0
	if j.coord != nil {
		s.at = complete
	}
	rt.Stop(ErrStopped)
}

// finishStop is the service that ends a distributed job's clean stop:
// once the runtime has stopped with ErrStopped, and the checkpoint
// service has written and checked the parts its tasks had handed it
// (they may complete a checkpoint after the one the stop was agreed at),
// it sends this process's final summary, with the newest complete
// checkpoint, waits for its peers' and closes the network, on which the
// runtime's pumps wait.
func (j *Job) finishStop(rt *runtime.Runtime, x *summary.Exchange) func(done <-chan struct{}) error {
	return func(done <-chan struct{}) error {
		<-done
		if errors.Is(rt.Err(), ErrStopped) {
			if c := j.coord; c != nil && c.served != nil {
				<-c.served
			}
			j.finishSummaries(x)
		}
		return nil
	}
}

// finishSummaries sends the final summary and closes the network after a
// stop, once.
func (j *Job) finishSummaries(x *summary.Exchange) {
	j.stop.mu.Lock()
	finished := j.stop.finished
	j.stop.finished = true
	j.stop.mu.Unlock()
	if !finished {
		x.Finish(stopFinishTimeout)
		if !x.Board().Settled(j.Process()) {
			j.Logger().Warn("weir: a peer's final summary did not come after the stop; the checkpoint it stopped at may be newer than this process says", "waited", stopFinishTimeout)
		}
		j.closeNet()
	}
}

// stopMessage fills in the stop fields of this process's summary.
func (j *Job) stopMessage(m *summary.Message) {
	j.stop.mu.Lock()
	defer j.stop.mu.Unlock()
	// A stop is announced with its proposal, so that a peer that hears
	// of it knows what it proposes.
	m.Stop = j.stop.requested && (j.coord == nil || j.stop.proposal > 0)
	m.StopAt = j.stop.proposal
	m.Stopped = j.stop.ended
}

// stopped waits for what a stop left running and reports the checkpoint
// the job stopped at: the newest known complete once every process has
// stopped and written the parts it held (a peer may have completed one
// more before it heard, or as it wrote them).
func (j *Job) stopped() uint64 {
	if x := j.summaries; x != nil {
		// The stop-finish service did this, unless the stop came once
		// every task had ended and the service had returned.
		j.finishSummaries(x)
	}
	j.stop.mu.Lock()
	at := j.stop.at
	j.stop.mu.Unlock()
	if j.coord != nil {
		_, complete := j.coord.progress()
		at = max(at, complete)
	}
	if x := j.summaries; x != nil {
		at = max(at, x.Board().Complete())
	}
	return at
}
