package engine

import (
	"time"

	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/summary"
)

// figures returns this process's figures in the encoding the summaries
// carry, or nil before the run's instances are all wired.
func (j *Job) figures() []byte {
	j.mu.Lock()
	reg, ready := j.reg, j.statsReady
	j.mu.Unlock()
	if reg == nil || !ready {
		return nil
	}
	return metrics.Encode(nil, reg.Snapshot(time.Now()))
}

// kickSummaries sends this process's summary soon (at most one per
// 100 ms): an epoch ended.
func (j *Job) kickSummaries() {
	j.mu.Lock()
	x := j.summaries
	j.mu.Unlock()
	if x != nil {
		x.Kick()
	}
}

// Stats returns the whole job as this process sees it: its own figures,
// fresh, and the newest its peers sent (a process not heard from has
// Time 0). Before the job runs, every process has Time 0.
func (j *Job) Stats() metrics.JobStats {
	st := metrics.JobStats{Job: j.Name, Self: j.Process(), Processes: make([]metrics.ProcessStats, j.Processes())}
	for p := range st.Processes {
		st.Processes[p].Process = p
	}
	st.Critical = j.critical()
	if j.autoscale.board.Load() != nil {
		j.autoscale.mu.Lock()
		st.Autoscale = &metrics.AutoscaleStats{Decisions: len(j.autoscale.decisions), Differed: j.autoscale.differed, Wanted: j.autoscale.wanted,
			Need: j.autoscale.need, Running: j.autoscale.running}
		j.autoscale.mu.Unlock()
	}
	j.mu.Lock()
	reg, x := j.reg, j.summaries
	ready := j.statsReady
	j.mu.Unlock()
	if reg == nil || !ready {
		return st
	}
	for p := range st.Processes {
		if x == nil || p == j.Process() {
			continue
		}
		if ps, ok := peerFigures(x.Board(), p); ok {
			st.Processes[p] = ps
		}
	}
	st.Processes[j.Process()] = reg.Snapshot(time.Now())
	st.AssignLoads(j.loadOwner)
	return st
}

// peerFigures returns process p's figures from its newest summary; one
// that does not decode (or names another process) is left out, as a
// process not heard from.
func peerFigures(b *summary.Board, p int) (metrics.ProcessStats, bool) {
	m, ok := b.Latest(p)
	if !ok || len(m.Figures) == 0 {
		return metrics.ProcessStats{}, false
	}
	ps, err := metrics.Decode(m.Figures)
	if err != nil || ps.Process != p {
		return metrics.ProcessStats{}, false
	}
	ps.Final = ps.Final || m.Final
	return ps, true
}

// loadOwner returns, for a keyed chain named op, the owner of each key
// group: the routing table its keyed exchanges use after the newest epoch
// this process completed (a rescale changes it while the job runs).
func (j *Job) loadOwner(op string) func(kg int) int {
	j.mu.Lock()
	par, ok := j.keyedPar[op]
	j.mu.Unlock()
	if !ok {
		return nil
	}
	rt := j.Schedule(par).At(j.CompletedEpoch() + 1)
	return func(kg int) int { return rt.Owner(partition.KeyGroup(kg)) }
}
