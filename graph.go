package weir

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/runtime"
)

// graph is a job's logical graph as the operators build it, with the
// job's configuration: what a Stream refers to.
type graph struct {
	name  string
	cfg   jobConfig
	nodes []*node
	err   error

	lateCounters []lateCounter
	partStats    []statser
	// counted are the inputs that count something for the summary.
	counted []Counted

	closeMu sync.Mutex
	closers []io.Closer // closed when the job ends (state stores)
}

// statser is a partitioned edge's statistics.
type statser interface{ snapshot() PartitionStats }

// closeAtEnd registers c to be closed when the job ends.
func (j *graph) closeAtEnd(c io.Closer) {
	j.closeMu.Lock()
	j.closers = append(j.closers, c)
	j.closeMu.Unlock()
}

// node is an operator of the logical graph with the typed factories that
// make its instances.
type node struct {
	id    int
	name  string
	op    string
	kind  plan.Kind
	state plan.State
	sel   plan.Selectivity
	key   string // the key's planner name (keyID), for a keyed operator
	// userState: a user function keeps state of its own, which
	// checkpoints cannot save.
	userState bool
	par       int // 0: the planner decides, unless parSet
	parSet    bool
	// params are the operator's parameters and record types, and source
	// its input's identity, for the job's identity.
	params string
	source string
	inputs []inputEdge
	// ports[i] combines the pushers of output port i's consumers.
	ports []func(outs []any) any
	// times[i], if set, is the range of the event times the node assigns
	// to the records of output port i (EventTime, windows, joins); a port
	// without passes its input's times on.
	times []*timeRange
	// Exactly one of these is set, by kind.
	newSource func(tc taskCtx, outs []any) (runtime.SourceTask, error)
	newOp     func(tc taskCtx, outs []any) (any, error)
	newTask   func(tc taskCtx, outs []any) (runtime.InputTask, error)
	// recoverInput, on a source whose input is Recoverable, calls Recover.
	recoverInput func(RecoverContext) error
}

// taskCtx is what an operator instance is made with.
type taskCtx struct {
	inst, par int
	// units is the instance's task's unit context in an ordered job (nil
	// otherwise); recv, set on an ordered task head, says how it reads.
	units *unitCtx
	recv  *ordRecv
	// op and sel are the operator's name and declared selectivity, for
	// the record operator being made.
	op  string
	sel plan.Selectivity
	// snaps, in a job with checkpoints, gathers the task's operators
	// whose state is saved.
	snaps *[]snapEntry
	// from is the checkpoint the job restored from (0: none); commits,
	// in a job with checkpoints, registers a two-phase output and
	// returns what saves its prepared checkpoints.
	from    uint64
	commits func(out TwoPhase, op string, inst int) (any, error)
}

// saves registers s (a keyed or instance snapshotter) as operator op's
// state, in a job with checkpoints.
func (tc taskCtx) saves(op string, s any) {
	if tc.snaps != nil {
		*tc.snaps = append(*tc.snaps, snapEntry{op: op, s: s})
	}
}

// inputEdge is an edge into a node, with the factory of its sending side.
type inputEdge struct {
	from     *node
	fromPort int
	keyed    bool
	// exchange makes the sender for one upstream instance. It returns a
	// pusher of the upstream type.
	exchange func(x exchangeCtx) any
	// wire encodes what the exchange sends, for a receiver in another
	// process.
	wire func() (wire, error)
}

// exchangeCtx is what the sending side of an exchange is made from.
type exchangeCtx struct {
	ex plan.Exchange
	// outlets lead to the receiving instances.
	outlets []runtime.Outlet
	// name is the receiving operator's; it names panics raised while
	// sending (in key functions, say).
	name string
	// sender is the index of the upstream instance among senders.
	sender, senders int
	// done is closed when the job stops.
	done <-chan struct{}
	// ordered asks for an ordered exchange; units is the sending task's
	// unit context, and whole tells whether the sending instances see
	// whole units.
	ordered bool
	whole   bool
	units   *unitCtx
	// dist is set in a job of several processes: keys must hash alike in
	// every process.
	dist bool
	// from is the checkpoint the job restored from (0: none).
	from uint64
}

func (j *graph) add(n *node) *node {
	n.id = len(j.nodes)
	if n.name == "" {
		n.name = fmt.Sprintf("%s%d", n.op, n.id)
	}
	j.nodes = append(j.nodes, n)
	return n
}

func (j *graph) fail(err error) {
	if j.err == nil {
		j.err = err
	}
}

type lateCounter struct {
	name string
	n    *atomic.Int64
}

// processes is the number of processes the job runs in.
func (j *graph) processes() int {
	if c := j.cfg.cluster; c != nil {
		if c.net != nil {
			return c.net.Processes()
		}
		return max(1, len(c.peers))
	}
	return 1
}

// stableHash reports whether keys must hash alike in every process and
// every run: in a job of several processes, or one whose state outlives a
// run in checkpoints.
func (j *graph) stableHash() bool { return j.processes() > 1 || j.cfg.ckpt != nil }

// autoStrategy is the strategy of "auto": roundrobin pre-aggregation,
// which costs least per record when keys are not skewed beyond what
// pre-aggregation absorbs.
const autoStrategy = partition.RoundRobin

// strategy resolves the job's partitioning for one aggregation.
func (j *graph) strategy(mergeable bool) (partition.Strategy, error) {
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

// strategyNames lists the partitioning strategies as "a, b or c".
func strategyNames() string {
	var n []string
	for _, s := range partition.Strategies() {
		n = append(n, s.String())
	}
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// checkParallelism refuses a Parallelism that cannot work.
func (n *node) checkParallelism(keyGroups int) error {
	switch {
	case !n.parSet:
	case n.par < 1:
		return fmt.Errorf("weir: %s: Parallelism(%d): must be at least 1", n.name, n.par)
	case n.state == plan.Keyed && n.par > keyGroups:
		return fmt.Errorf("weir: %s: Parallelism(%d) exceeds the %d key groups: a keyed operator can have at most one instance per key group; raise KeyGroups",
			n.name, n.par, keyGroups)
	}
	return nil
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

// Process returns this process's index in a distributed job (0 in a
// single process): process 0 runs the one-instance operators, such as the
// sinks that write output files.
func (j *graph) Process() int {
	if c := j.cfg.cluster; c != nil {
		return c.self
	}
	return 0
}

// logger is where the job logs.
func (j *graph) logger() *slog.Logger {
	if j.cfg.logger != nil {
		return j.cfg.logger
	}
	return slog.Default()
}

// A wire turns what an exchange sends (batches of one or more kinds, and
// markers) into bytes for another process and back. Each message starts
// with a tag byte; variable-length sections carry their byte length.
type wire interface {
	// encode appends msg (a batch this edge's exchange sends) to buf.
	encode(buf []byte, msg any) ([]byte, error)
	// decode returns the batch or marker in buf; a marker comes back as
	// a progress.Marker.
	decode(buf []byte) (any, error)
}
