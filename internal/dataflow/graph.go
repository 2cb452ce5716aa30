package dataflow

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/runtime"
)

// Graph is a job's logical graph as the operators build it, with the
// job's configuration: what a Stream refers to.
type Graph struct {
	Name  string
	Cfg   JobConfig
	Nodes []*Node
	Err   error

	LateCounters []LateCounter
	PartStats    []statser
	// Counted are the inputs that count something for the summary.
	Counted []Counted

	// routing holds the key-group tables by instance count: the table
	// the job starts with and the schedule of the tables that follow.
	routeMu   sync.Mutex
	routing   map[int]*partition.Table
	schedules map[int]*routing.Schedule

	closeMu sync.Mutex
	Closers []io.Closer // closed when the job ends (state stores)
	// named holds the stores registered by name (CloseAtEndNamed).
	named map[string]io.Closer
}

// statser is a partitioned edge's statistics.
type statser interface{ Snapshot() PartitionStats }

// CloseAtEnd registers c to be closed when the job ends.
func (j *Graph) CloseAtEnd(c io.Closer) {
	j.closeMu.Lock()
	j.Closers = append(j.Closers, c)
	j.closeMu.Unlock()
}

// CloseAtEndNamed registers c, as CloseAtEnd does, as the store named
// name: an instance that starts again (a keyed operator's, which runs
// only while it owns key groups) opens its store again once its earlier
// run ended, and closes that run's first (ClosePrevious). c's Close must
// be safe to call twice.
func (j *Graph) CloseAtEndNamed(name string, c io.Closer) {
	j.closeMu.Lock()
	if j.named == nil {
		j.named = map[string]io.Closer{}
	}
	j.named[name] = c
	j.Closers = append(j.Closers, c)
	j.closeMu.Unlock()
}

// ClosePrevious closes the store registered under name, if any, before
// one is opened there again.
func (j *Graph) ClosePrevious(name string) error {
	j.closeMu.Lock()
	old := j.named[name]
	delete(j.named, name)
	if i := slices.Index(j.Closers, old); old != nil && i >= 0 {
		j.Closers = slices.Delete(j.Closers, i, i+1)
	}
	j.closeMu.Unlock()
	if old != nil {
		return old.Close()
	}
	return nil
}

// Node is an operator of the logical graph with the typed factories that
// make its instances.
type Node struct {
	Id    int
	Name  string
	Op    string
	Kind  plan.Kind
	State plan.State
	Sel   plan.Selectivity
	Key   string // the key's planner name (keyID), for a keyed operator
	// UserState: a user function keeps state of its own, which
	// checkpoints cannot save.
	UserState bool
	// Idle: an EventTime given IdleAfter, whose idle instances receivers
	// leave out of the watermark.
	Idle   bool
	Par    int // 0: the planner decides, unless parSet
	ParSet bool
	// Params are the operator's parameters and record types, and source
	// its input's identity, for the job's identity.
	Params string
	Source string
	Inputs []InputEdge
	// Ports[i] combines the pushers of output port i's consumers.
	Ports []func(outs []any) any
	// Times[i], if set, is the range of the event times the node assigns
	// to the records of output port i (EventTime, windows, joins); a port
	// without passes its input's times on.
	Times []*TimeRange
	// Exactly one of these is set, by kind.
	NewSource func(tc TaskCtx, outs []any) (runtime.SourceTask, error)
	NewOp     func(tc TaskCtx, outs []any) (any, error)
	NewTask   func(tc TaskCtx, outs []any) (runtime.InputTask, error)
	// RecoverInput, on a source whose input is Recoverable, calls Recover.
	RecoverInput func(RecoverContext) error
}

// TaskCtx is what an operator instance is made with.
type TaskCtx struct {
	Inst, Par int
	// Units is the instance's task's unit context in an ordered job (nil
	// otherwise); recv, set on an ordered task head, says how it reads.
	Units *UnitCtx
	Recv  *OrdRecv
	// Op and sel are the operator's name and declared selectivity, for
	// the record operator being made.
	Op  string
	Sel plan.Selectivity
	// Snaps gathers the task's operators whose state is saved, in a job
	// with checkpoints, or moves with its key groups in a rescale.
	Snaps *[]SnapEntry
	// Checkpoints says the job takes checkpoints.
	Checkpoints bool
	// View is the routing table the instance routes its current epoch by,
	// which the ownership checks of a keyed region read.
	View *routing.View
	// From is the checkpoint the job restored from (0: none); commits,
	// in a job with checkpoints, registers a two-phase output and
	// returns what saves its prepared checkpoints.
	From    uint64
	Commits func(out TwoPhase, op string, inst int) (any, error)
	// Share, on a source instance, is the share of its input it reads
	// first (nil: its own, Instance Inst of Par; Parallelism 0: none).
	Share *SourceContext
	// Done is closed when the job stops. In a job of several processes,
	// Posts, Self and ProcOf are as in ExchangeCtx, ProcOf for the
	// instances of this task.
	Done   <-chan struct{}
	Posts  RoundPosts
	Self   int
	ProcOf func(inst int) int
}

// Saves registers s (a keyed or instance snapshotter) as operator op's
// state.
func (tc TaskCtx) Saves(op string, s any) {
	if tc.Snaps != nil {
		*tc.Snaps = append(*tc.Snaps, SnapEntry{Op: op, S: s})
	}
}

// InputEdge is an edge into a node, with the factory of its sending side.
type InputEdge struct {
	From     *Node
	FromPort int
	Keyed    bool
	// Exchange makes the sender for one upstream instance. It returns a
	// pusher of the upstream type.
	Exchange func(x ExchangeCtx) any
	// Wire encodes what the exchange sends, for a receiver in another
	// process.
	Wire func() (Wire, error)
}

// ExchangeCtx is what the sending side of an exchange is made from.
type ExchangeCtx struct {
	Ex plan.Exchange
	// Outlets lead to the receiving instances.
	Outlets []runtime.Outlet
	// Name is the receiving operator's; it names panics raised while
	// sending (in key functions, say).
	Name string
	// Sender is the index of the upstream instance among senders.
	Sender, Senders int
	// Done is closed when the job stops.
	Done <-chan struct{}
	// Ordered asks for an ordered exchange; units is the sending task's
	// unit context, and whole tells whether the sending instances see
	// whole units.
	Ordered bool
	Whole   bool
	Units   *UnitCtx
	// Dist is set in a job of several processes: keys must hash alike in
	// every process.
	Dist bool
	// From is the checkpoint the job restored from (0: none).
	From uint64
	// Routing, on a keyed edge, is the receiving operator's key-group
	// table: its Instances are the outlets.
	Routing *partition.Table
	// Schedule is the schedule of the tables that follow Routing: a
	// keyed exchange routes each epoch by the table it has for it.
	Schedule *routing.Schedule
	// In a job of several processes, Posts carries what the micro-batch
	// rounds of one process hand to another, Self is this process and
	// ProcOf the process of a receiving instance (nil in one process).
	Posts  RoundPosts
	Self   int
	ProcOf func(inst int) int
}

// RoundPosts carries the messages of the micro-batch rounds between
// processes: each process's round of an epoch posts every other process
// what that process's instances own, and takes what they post it.
type RoundPosts interface {
	// Post sends process to the messages of operator op's round of epoch
	// epoch (possibly none).
	Post(to int, op string, epoch uint64, msgs [][]byte) error
	// Take waits for process from's messages of op's round of epoch, and
	// fails if the job stops or from ended without posting them.
	Take(from int, op string, epoch uint64) ([][]byte, error)
}

func (j *Graph) Add(n *Node) *Node {
	n.Id = len(j.Nodes)
	if n.Name == "" {
		n.Name = fmt.Sprintf("%s%d", n.Op, n.Id)
	}
	j.Nodes = append(j.Nodes, n)
	return n
}

func (j *Graph) Fail(err error) {
	if j.Err == nil {
		j.Err = err
	}
}

type LateCounter struct {
	Name string
	N    *atomic.Int64
}

// Processes is the number of processes the job runs in.
func (j *Graph) Processes() int {
	if c := j.Cfg.Cluster; c != nil {
		if c.Net != nil {
			return c.Net.Processes()
		}
		return max(1, len(c.Peers))
	}
	return 1
}

// StableHash reports whether keys must hash alike in every process and
// every run: in a job of several processes, or one whose state outlives a
// run in checkpoints.
func (j *Graph) StableHash() bool { return j.Processes() > 1 || j.Cfg.Ckpt != nil }

// autoStrategy is the strategy of "auto": roundrobin pre-aggregation,
// which each sender turns off for the epochs where it does not pay (see
// Auto), so that those go raw as under hash.
const autoStrategy = partition.RoundRobin

// Auto reports whether the job's partitioning is auto: roundrobin's
// combining, which each sender turns off for epochs where it does not pay.
func (j *Graph) Auto() bool { return j.Cfg.Partitioning == "" || j.Cfg.Partitioning == "auto" }

// Strategy resolves the job's partitioning for one aggregation.
func (j *Graph) Strategy(mergeable bool) (partition.Strategy, error) {
	s := autoStrategy
	if n := j.Cfg.Partitioning; n != "" && n != "auto" {
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

// CheckParallelism refuses a Parallelism that cannot work.
func (n *Node) CheckParallelism(keyGroups int) error {
	switch {
	case !n.ParSet:
	case n.Par < 1:
		return fmt.Errorf("weir: %s: Parallelism(%d): must be at least 1", n.Name, n.Par)
	case n.State == plan.Keyed && n.Par > keyGroups:
		return fmt.Errorf("weir: %s: Parallelism(%d) exceeds the %d key groups: a keyed operator can have at most one instance per key group; raise KeyGroups",
			n.Name, n.Par, keyGroups)
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
func (j *Graph) Process() int {
	if c := j.Cfg.Cluster; c != nil {
		return c.Self
	}
	return 0
}

// Logger is where the job logs.
func (j *Graph) Logger() *slog.Logger {
	if j.Cfg.Logger != nil {
		return j.Cfg.Logger
	}
	return slog.Default()
}

// A wire turns what an exchange sends (batches of one or more kinds, and
// markers) into bytes for another process and back. Each message starts
// with a tag byte; variable-length sections carry their byte length.
type Wire interface {
	// Encode appends msg (a batch this edge's exchange sends) to buf.
	Encode(buf []byte, msg any) ([]byte, error)
	// Decode returns the batch or marker in buf; a marker comes back as
	// a progress.Marker.
	Decode(buf []byte) (any, error)
}

// Routing returns the key-group table the keyed operators of par
// instances start with: the contiguous ranges of partition.Contiguous over
// the first Cfg.Active of them (all by default), or the table in force at
// the checkpoint the job resumes from (SetSchedule).
func (j *Graph) Routing(par int) *partition.Table {
	return j.Schedule(par).At(0)
}

// Schedule returns the routing schedule of the keyed operators of par
// instances, which every keyed exchange into them, their restore, their
// ownership checks and their key-group handovers consult.
func (j *Graph) Schedule(par int) *routing.Schedule {
	j.routeMu.Lock()
	defer j.routeMu.Unlock()
	if s := j.schedules[par]; s != nil {
		return s
	}
	if j.schedules == nil {
		j.schedules = map[int]*routing.Schedule{}
	}
	active := par
	if a := j.Cfg.Active; a > 0 && a < par {
		active = a
	}
	c := partition.Contiguous(j.Cfg.KeyGroups, active)
	owner := make([]int, c.Groups())
	for kg := range owner {
		owner[kg] = c.Owner(partition.KeyGroup(kg))
	}
	t, err := partition.NewTable(0, par, owner)
	if err != nil {
		panic(err) // par and the key groups were checked at Run
	}
	s := routing.New(t)
	j.schedules[par] = s
	return s
}

// SetSchedule sets the routing schedule of the keyed operators of par
// instances, restored from a checkpoint, before the job is built.
func (j *Graph) SetSchedule(par int, s *routing.Schedule) {
	j.routeMu.Lock()
	defer j.routeMu.Unlock()
	if j.schedules == nil {
		j.schedules = map[int]*routing.Schedule{}
	}
	j.schedules[par] = s
}

// ResetSchedule drops the routing schedule of the keyed operators of par
// instances: the next Schedule is the one the job starts with.
func (j *Graph) ResetSchedule(par int) {
	j.routeMu.Lock()
	defer j.routeMu.Unlock()
	delete(j.schedules, par)
}
