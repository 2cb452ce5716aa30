package exchange

import (
	"log/slog"
	"sync"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
)

// EdgeStats gathers the partitioning figures of one aggregation's
// exchange. Senders that do not meet per epoch (hash, roundrobin) report
// their loads per epoch, and an epoch is accounted once every sender has
// passed it.
type EdgeStats struct {
	mu       sync.Mutex
	Log      *slog.Logger
	Name     string
	Strategy partition.Strategy
	Auto     bool // partitioning auto: Strategy's combining, on or off per epoch
	senders  int
	through  []progress.Epoch // per sender: last epoch reported, +1
	present  []bool           // per sender: runs in this process and reports
	pending  map[progress.Epoch]*epochLoads
	mapImb   partition.Imbalance
	redImb   partition.Imbalance
	st       dataflow.PartitionStats
}

type epochLoads struct {
	mapLoad []int64 // per sender
	redLoad []int64 // per receiver
}

func (s *EdgeStats) Init(senders, receivers int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.through != nil {
		return
	}
	s.senders = senders
	s.through = make([]progress.Epoch, senders)
	s.present = make([]bool, senders)
	s.pending = map[progress.Epoch]*epochLoads{}
	s.st.Partitions = max(senders, receivers)
	s.st.MapTasks, s.st.ReduceTasks = senders, receivers
}

// join marks sender i as one that reports: in a distributed job, only
// the senders in this process do, and the figures are this process's.
func (s *EdgeStats) join(i int) {
	s.mu.Lock()
	s.present[i] = true
	s.mu.Unlock()
}

// Report adds sender i's loads for the epochs it ended with m: the
// records it received (its map block) and what it sent to each receiver.
func (s *EdgeStats) Report(i int, m progress.Marker, mapLoad int64, sent []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := m.Epoch
	if m.Final {
		e = ^progress.Epoch(0) - 1
	}
	l := s.pending[e]
	if l == nil {
		l = &epochLoads{mapLoad: make([]int64, s.senders), redLoad: make([]int64, len(sent))}
		s.pending[e] = l
	}
	l.mapLoad[i] += mapLoad
	for t, n := range sent {
		l.redLoad[t] += n
	}
	s.through[i] = e + 1
	low := ^progress.Epoch(0)
	for i, t := range s.through {
		if s.present[i] {
			low = min(low, t)
		}
	}
	for e, l := range s.pending {
		if e < low {
			var mapLoad []int64
			for i, n := range l.mapLoad {
				if s.present[i] {
					mapLoad = append(mapLoad, n)
				}
			}
			s.account(mapLoad, l.redLoad, 0, 0)
			delete(s.pending, e)
		}
	}
}

// account adds one epoch. The caller holds mu.
func (s *EdgeStats) account(mapLoad, redLoad []int64, split, frags int64) {
	s.mapImb.Add(mapLoad)
	s.redImb.Add(redLoad)
	s.st.SplitKeys += split
	s.st.Fragments += frags
	s.st.Epochs++
}

// AddRound accounts one round of a cooperating exchange (prompt, pkg).
func (s *EdgeStats) AddRound(mapLoad, redLoad []int64, split, frags int64, tasks int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.account(mapLoad, redLoad, split, frags)
	s.st.MapTasks, s.st.ReduceTasks = tasks, tasks
}

// Changed logs and counts a change of the task count.
func (s *EdgeStats) Changed(tasks int, processing, interval time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.TaskChanges++
	old := s.st.MapTasks
	s.st.MapTasks, s.st.ReduceTasks = tasks, tasks
	if s.Log != nil {
		s.Log.Info("weir: partition tasks changed", "operator", s.Name, "from", old, "to", tasks,
			"processing", processing, "interval", interval)
	}
}

func (s *EdgeStats) Snapshot() dataflow.PartitionStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	st.Operator = s.Name
	st.Strategy = s.Strategy.String()
	if s.Auto {
		st.Strategy = "auto"
	}
	st.MapImbalance = s.mapImb.Value()
	st.ReduceImbalance = s.redImb.Value()
	return st
}
