package engine

import (
	"time"

	"github.com/weirstream/weir/internal/coord"
	"github.com/weirstream/weir/internal/summary"
	"github.com/weirstream/weir/internal/transport"
)

// summaryChannel is the transport channel of the processes' summaries;
// channelID never makes it (edges stop short of 4095).
const summaryChannel = 0xFFFFFFFF

// finishTimeout bounds how long a process that has ended waits for its
// peers' final summaries.
const finishTimeout = 10 * time.Second

// stopFinishTimeout bounds it after a clean stop: a peer sends its final
// summary once it has written the checkpoint parts its tasks handed it,
// which with much state takes longer.
const stopFinishTimeout = time.Minute

// startSummaries starts the exchange of summaries with the job's other
// processes.
func (j *Job) startSummaries(nw transport.Network) {
	every := min(max(j.Cfg.Interval/2, 50*time.Millisecond), 500*time.Millisecond)
	x := summary.StartAbsent(nw, summaryChannel, every, j.slots.absent(), func() summary.Message {
		ending := j.markEnding() // before the announcements: it covers them
		m := summary.Message{Counts: summary.Counts(j.localCounts()), Figures: j.figures(), Reconfigs: j.announced(), Ending: ending, Sizing: j.sizingShare()}
		if j.coord != nil {
			_, m.Complete = j.coord.progress()
			m.Written = j.coord.newestWritten()
			if j.coord.gate.paced {
				st := j.coord.gate.paceStep()
				m.PaceFrom, m.PaceStride = st.From, st.Stride
			}
		}
		j.stopMessage(&m)
		j.releaseLives(false)
		j.passIdle()
		return m
	}, func(m summary.Message) {
		j.heard(m.Process, m.Reconfigs)
		j.hearSizing(m.Process, m.Sizing)
		j.peerEnding(m.Process, m.Ending || m.Final)
		if m.Final {
			j.peerEnded(m.Process) // after its announcements
		}
		j.releaseLives(false)
		if j.coord != nil {
			// The stride first: the send waits while the checkpoint
			// service's inbox is full (a long write), and a process
			// that writes slowly is the one that must follow it.
			j.coord.hearPace(m.PaceFrom, m.PaceStride)
			j.coord.send(coord.PeerWrote{Process: m.Process, N: m.Written})
		}
		j.checkStop()
	})
	j.mu.Lock()
	j.summaries = x
	rt := j.rt
	j.mu.Unlock()
	rt.AddService("stop-finish", j.finishStop(rt, x))
}

// localCounts are this process's counters: records read, late records,
// and what the inputs count.
func (j *Job) localCounts() map[string]int64 {
	c := map[string]int64{"late": 0, "records": 0}
	j.mu.Lock()
	rt, coord := j.rt, j.coord
	j.mu.Unlock()
	if rt != nil {
		c["records"] = rt.Records()
	}
	if coord != nil && j.Process() == 0 {
		// What the sources read before the checkpoint the job restored,
		// counted once, by process 0.
		c["records"] += coord.records
	}
	for _, l := range j.LateCounters {
		c["late"] += l.N.Load()
	}
	for _, in := range j.Counted {
		for k, v := range in.Counters() {
			c[k] += v
		}
	}
	return c
}
