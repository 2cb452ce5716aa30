package weir

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
)

// Partitioning chooses how keyed aggregations partition the records of
// each epoch:
//
//   - "hash": every key whole at the owner of its key group, which folds
//     the raw records (Flink's keyBy, Spark's hash partitioning);
//   - "roundrobin": each sender pre-aggregates the records that reached it
//     (blocks cut by arrival, as Spark Streaming's time-based blocks) and
//     sends partials to the key's owner;
//   - "pkg": partial key grouping: each record goes to the less loaded of
//     its key's two candidate map tasks, which pre-aggregate;
//   - "prompt": Prompt's frequency-aware partitioning: map blocks balanced
//     in records and distinct keys with hot keys split, load-aware
//     reducers, and a task count that follows the load;
//   - "auto" (the default): roundrobin, which costs least per record on
//     one machine, where sources already spread records evenly over the
//     senders (see weir bench skew).
//
// Strategies other than hash need an aggregator with Merge and a window
// other than Session; other aggregations use hash. An unknown name is an
// error from Run.
func Partitioning(name string) JobOption {
	return func(c *jobConfig) { c.partitioning = name }
}

// autoStrategy is the strategy of "auto": roundrobin pre-aggregation,
// which costs least per record when keys are not skewed beyond what
// pre-aggregation absorbs.
const autoStrategy = partition.RoundRobin

// strategy resolves the job's partitioning for one aggregation.
func (j *Job) strategy(mergeable bool) (partition.Strategy, error) {
	s := autoStrategy
	if n := j.cfg.partitioning; n != "" && n != "auto" {
		var err error
		if s, err = partition.ParseStrategy(n); err != nil {
			return 0, fmt.Errorf("weir: Partitioning(%q): unknown; want auto, %s", n, strategyNames())
		}
	}
	if !mergeable {
		return partition.Hash, nil
	}
	return s, nil
}

// PartitionStats describes the partitioning of one keyed aggregation over
// the epochs it has seen.
type PartitionStats struct {
	// Operator is the aggregation's name.
	Operator string
	// Strategy is the strategy in use.
	Strategy string
	// Partitions is the number of map and reduce tasks available (the
	// parallelism of the exchange).
	Partitions int
	// MapImbalance is the largest map block over the mean block, in
	// records, weighted by records over the epochs. The map blocks of hash
	// and roundrobin are what each sender received.
	MapImbalance float64
	// ReduceImbalance is the largest reducer input over the mean, likewise:
	// raw records for hash, partials for the others.
	ReduceImbalance float64
	// SplitKeys and Fragments are summed over the epochs: keys cut into
	// more than one map block, and the fragments (key, block) of all keys.
	SplitKeys int64
	Fragments int64
	Epochs    int64
	// MapTasks and ReduceTasks are the tasks of the last epoch;
	// TaskChanges counts the elastic controller's changes.
	MapTasks, ReduceTasks int
	TaskChanges           int64
}

// PartitionStats returns the partitioning figures of every keyed
// aggregation of the job, in the order they were added.
func (j *Job) PartitionStats() []PartitionStats {
	out := make([]PartitionStats, 0, len(j.partStats))
	for _, s := range j.partStats {
		out = append(out, s.snapshot())
	}
	return out
}

// edgeStats gathers the partitioning figures of one aggregation's
// exchange. Senders that do not meet per epoch (hash, roundrobin) report
// their loads per epoch, and an epoch is accounted once every sender has
// passed it.
type edgeStats struct {
	mu       sync.Mutex
	log      *slog.Logger
	name     string
	strategy partition.Strategy
	senders  int
	through  []progress.Epoch // per sender: last epoch reported, +1
	present  []bool           // per sender: runs in this process and reports
	pending  map[progress.Epoch]*epochLoads
	mapImb   partition.Imbalance
	redImb   partition.Imbalance
	st       PartitionStats
}

type epochLoads struct {
	mapLoad []int64 // per sender
	redLoad []int64 // per receiver
}

func (s *edgeStats) init(senders, receivers int) {
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
func (s *edgeStats) join(i int) {
	s.mu.Lock()
	s.present[i] = true
	s.mu.Unlock()
}

// report adds sender i's loads for the epochs it ended with m: the
// records it received (its map block) and what it sent to each receiver.
func (s *edgeStats) report(i int, m progress.Marker, mapLoad int64, sent []int64) {
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
func (s *edgeStats) account(mapLoad, redLoad []int64, split, frags int64) {
	s.mapImb.Add(mapLoad)
	s.redImb.Add(redLoad)
	s.st.SplitKeys += split
	s.st.Fragments += frags
	s.st.Epochs++
}

// addRound accounts one round of a cooperating exchange (prompt, pkg).
func (s *edgeStats) addRound(mapLoad, redLoad []int64, split, frags int64, tasks int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.account(mapLoad, redLoad, split, frags)
	s.st.MapTasks, s.st.ReduceTasks = tasks, tasks
}

// changed logs and counts a change of the task count.
func (s *edgeStats) changed(tasks int, processing, interval time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.TaskChanges++
	old := s.st.MapTasks
	s.st.MapTasks, s.st.ReduceTasks = tasks, tasks
	if s.log != nil {
		s.log.Info("weir: partition tasks changed", "operator", s.name, "from", old, "to", tasks,
			"processing", processing, "interval", interval)
	}
}

func (s *edgeStats) snapshot() PartitionStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	st.Operator = s.name
	st.Strategy = s.strategy.String()
	st.MapImbalance = s.mapImb.Value()
	st.ReduceImbalance = s.redImb.Value()
	return st
}
