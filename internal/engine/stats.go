package engine

import (
	"sync"
	"time"

	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/summary"
	"github.com/weirstream/weir/internal/transport"
)

// statsChannel is the transport channel of the processes' figures (see
// internal/metrics); channelID never makes it (edges stop short of 4095,
// so its channels stay below 0xFFF00000), nor is it summaryChannel.
const statsChannel = 0xFFFFFFFE

// statsEvery is the shortest interval between two of a process's
// figures sent at epoch ends.
const statsEvery = 100 * time.Millisecond

// statsFeed sends this process's figures to its peers at epoch ends and
// keeps the newest of theirs.
type statsFeed struct {
	feed  *summary.Feed
	mu    sync.Mutex
	peers []metrics.ProcessStats // by process; Time 0 until heard from
}

// kick sends this process's figures soon (nothing in a single process).
func (f *statsFeed) kick() {
	if f != nil {
		f.feed.Kick()
	}
}

// startStats starts the exchange of figures with the job's other
// processes.
func (j *Job) startStats(nw transport.Network) {
	reg := j.registry()
	f := &statsFeed{peers: make([]metrics.ProcessStats, nw.Processes())}
	f.feed = summary.StartFeed(nw, statsChannel, statsEvery, func(final bool) []byte {
		ps := reg.Snapshot(time.Now())
		ps.Final = ps.Final || final
		return metrics.Encode(nil, ps)
	}, func(from int, b []byte) bool {
		ps, err := metrics.Decode(b)
		if err != nil || ps.Process != from {
			return false // not from this feed: ignored
		}
		f.mu.Lock()
		if ps.Time >= f.peers[from].Time {
			f.peers[from] = ps
		}
		f.mu.Unlock()
		return ps.Final
	})
	j.mu.Lock()
	j.feed = f
	j.mu.Unlock()
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
	j.mu.Lock()
	reg, f := j.reg, j.feed
	ready := j.statsReady
	j.mu.Unlock()
	if reg == nil || !ready {
		return st
	}
	if f != nil {
		f.mu.Lock()
		for p, ps := range f.peers {
			if p != j.Process() && ps.Time != 0 {
				st.Processes[p] = ps
			}
		}
		f.mu.Unlock()
	}
	st.Processes[j.Process()] = reg.Snapshot(time.Now())
	st.AssignLoads(j.loadOwner)
	return st
}

// loadOwner returns, for a keyed chain named op, the owner of each key
// group: the routing table its keyed exchanges use.
func (j *Job) loadOwner(op string) func(kg int) int {
	j.mu.Lock()
	par, ok := j.keyedPar[op]
	j.mu.Unlock()
	if !ok {
		return nil
	}
	rt := j.Routing(par)
	return func(kg int) int { return rt.Owner(partition.KeyGroup(kg)) }
}
