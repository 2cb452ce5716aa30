package weir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/summary"
	"github.com/weirstream/weir/internal/transport"
)

// Job is a dataflow program: build it with Source and the transformation
// functions, then Run it.
type Job struct {
	name  string
	cfg   jobConfig
	nodes []*node
	err   error
	ran   bool

	lateCounters []lateCounter
	partStats    []*edgeStats
	rt           *runtime.Runtime // set while running
	coord        *coordinator     // set while running with checkpoints

	mu        sync.Mutex
	latencies []time.Duration
	epochs    int64
	elapsed   time.Duration
	wireBytes atomic.Int64
	closers   []io.Closer // closed when the job ends (state stores)
	// counted are the inputs that count something for the summary;
	// summaries, in a distributed job, exchanges the counts.
	counted   []Counted
	summaries *summary.Exchange
	stop      stopper
	closeNet  func()
	stoppedAt uint64
}

// closeAtEnd registers c to be closed when the job ends.
func (j *Job) closeAtEnd(c io.Closer) {
	j.mu.Lock()
	j.closers = append(j.closers, c)
	j.mu.Unlock()
}

// NewJob returns an empty job.
func NewJob(name string, opts ...JobOption) *Job {
	j := &Job{name: name, cfg: defaultJobConfig()}
	for _, o := range opts {
		o(&j.cfg)
	}
	return j
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
	inputs []input
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
}

// saves registers s (a keyed or instance snapshotter) as operator op's
// state, in a job with checkpoints.
func (tc taskCtx) saves(op string, s any) {
	if tc.snaps != nil {
		*tc.snaps = append(*tc.snaps, snapEntry{op: op, s: s})
	}
}

// input is an edge into a node, with the factory of its sending side.
type input struct {
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
}

func (j *Job) add(n *node) *node {
	n.id = len(j.nodes)
	if n.name == "" {
		n.name = fmt.Sprintf("%s%d", n.op, n.id)
	}
	j.nodes = append(j.nodes, n)
	return n
}

func (j *Job) fail(err error) {
	if j.err == nil {
		j.err = err
	}
}

func (j *Job) plan() (*plan.Physical, error) {
	if j.err != nil {
		return nil, j.err
	}
	if err := j.cfg.validate(j.processes()); err != nil {
		return nil, err
	}
	if len(j.nodes) == 0 {
		return nil, errors.New("weir: job has no operators")
	}
	nodes := make([]plan.Node, len(j.nodes))
	for i, n := range j.nodes {
		if err := n.checkParallelism(j.cfg.keyGroups); err != nil {
			return nil, err
		}
		pn := plan.Node{ID: n.id, Name: n.name, Op: n.op, Kind: n.kind, State: n.state,
			Selectivity: n.sel, Key: n.key, Parallelism: n.par}
		for port, in := range n.inputs {
			pn.Inputs = append(pn.Inputs, plan.Input{From: in.from.id, FromPort: in.fromPort, Port: port, Keyed: in.keyed})
		}
		nodes[i] = pn
	}
	return plan.Build(nodes, plan.Config{Workers: j.cfg.workers * j.processes(), KeyGroups: j.cfg.keyGroups, Ordered: j.cfg.ordered})
}

// Explain returns the physical plan: tasks, their parallelism, the fused
// operators of each and the exchanges between them.
func (j *Job) Explain() (string, error) {
	p, err := j.plan()
	if err != nil {
		return "", err
	}
	order := "unordered"
	if j.cfg.ordered {
		order = "ordered"
	}
	procs := ""
	if n := j.processes(); n > 1 {
		procs = fmt.Sprintf(" x %d processes", n)
	}
	return fmt.Sprintf("job %s: %d workers%s, %d key groups, epochs %s, %s\n%s",
		j.name, j.cfg.workers, procs, j.cfg.keyGroups, j.epochDesc(), order, p.Explain()), nil
}

// ExplainDot returns the physical plan in Graphviz's dot language.
func (j *Job) ExplainDot() (string, error) {
	p, err := j.plan()
	if err != nil {
		return "", err
	}
	return p.Dot(j.name), nil
}

func (j *Job) epochDesc() string {
	if j.cfg.epochRecords > 0 {
		return fmt.Sprintf("every %d records", j.cfg.epochRecords)
	}
	return "every " + j.cfg.interval.String()
}

// Run executes the job. It returns when every source has ended and all
// windows have been flushed to the sinks, when an operator fails (with its
// error), or when ctx is cancelled (with ctx's error). A job runs once.
func (j *Job) Run(ctx context.Context) error {
	if j.ran {
		return errors.New("weir: job already ran")
	}
	j.ran = true
	defer func() {
		for _, c := range j.closers {
			c.Close()
		}
	}()
	p, err := j.plan()
	if err != nil {
		return err
	}
	if j.cfg.ckpt != nil {
		self, procs := j.Process(), j.processes()
		if j.coord, err = j.openCheckpoints(self, procs); err != nil {
			return err
		}
	}
	var rt *runtime.Runtime
	var origin time.Time
	if j.processes() > 1 {
		// Every process numbers time-based epochs from the same origin,
		// so they agree on epoch boundaries whenever each starts.
		origin = time.Unix(0, 0)
	}
	var first progress.Epoch
	if j.coord != nil && j.coord.from > 0 {
		first = progress.Epoch(j.coord.from) + 1
	}
	rt = runtime.New(runtime.Config{
		Interval:   j.cfg.interval,
		Records:    j.cfg.epochRecords,
		Origin:     origin,
		FirstEpoch: first,
		OnEpoch: func(s runtime.EpochStats) {
			j.mu.Lock()
			j.latencies = append(j.latencies, s.Latency)
			j.epochs++
			j.mu.Unlock()
			if j.cfg.onEpoch != nil {
				j.cfg.onEpoch(EpochStats{Epoch: uint64(s.Epoch), Watermark: s.Watermark, Latency: s.Latency, Final: s.Final, Records: rt.Records()})
			}
		},
	})
	net, err := j.network(ctx, p)
	if err != nil {
		return err
	}
	pl := placement{self: 0, procs: 1}
	if net != nil {
		defer net.Close()
		pl = placement{self: net.Self(), procs: net.Processes()}
	}
	if err := j.instantiate(p, rt, pl, net); err != nil {
		return err
	}
	if j.coord != nil {
		j.coord.onComplete = func(uint64) { j.checkStop() }
	}
	j.mu.Lock()
	j.rt = rt
	j.mu.Unlock()
	if net != nil {
		j.closeNet = func() { net.Close() }
		// A lost peer fails the job; a job that fails aborts the network,
		// which wakes whatever waits on it. A job that ends well has
		// received every peer's final marker, so nothing waits on the
		// network: it sends its final summary, waits for its peers', and
		// closes it below.
		j.startSummaries(net)
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		rt.AddService("network-watch", func(done <-chan struct{}) error {
			select {
			case <-net.Done():
				cancel(net.Err())
			case <-done:
				if err := rt.Err(); err != nil && !errors.Is(err, ErrStopped) {
					net.Abort(err) // tell the peers why
					net.Close()
				}
			}
			return nil
		})
	}
	if c := j.cfg.stopOn; c != nil {
		rt.AddService("stop-on", func(done <-chan struct{}) error {
			select {
			case <-c:
				j.Stop()
			case <-done:
			}
			return nil
		})
	}
	// A stop asked for before the job could carry it out (the summaries
	// of a distributed job must run first) takes effect now.
	j.checkStop()
	start := time.Now()
	err = rt.Run(ctx)
	j.mu.Lock()
	j.elapsed = time.Since(start)
	j.mu.Unlock()
	if errors.Is(err, ErrStopped) {
		at := j.stopped()
		j.mu.Lock()
		j.stoppedAt = at
		j.mu.Unlock()
	}
	if net != nil && err == nil {
		j.summaries.Finish(finishTimeout)
		if cerr := net.Close(); cerr != nil && !errors.Is(cerr, transport.ErrClosed) {
			err = cerr
		}
	}
	if err == nil {
		err = j.markFinished()
	}
	return err
}

type lateCounter struct {
	name string
	n    *atomic.Int64
}

// Metrics summarises a finished (or running) job.
type Metrics struct {
	// Records is the number of records the sources have read; after a
	// restore, those read before the checkpoint count too (records read
	// after it by a run that failed do not: they are read again).
	Records int64
	// Late is the number of records that arrived after their windows'
	// allowed lateness, over all window operators.
	Late       int64
	Epochs     int64
	LatencyP50 time.Duration
	LatencyP99 time.Duration
	LatencyMax time.Duration
	// Elapsed is how long the job ran, from the start of its tasks (after
	// a distributed job's processes connected) to its end.
	Elapsed time.Duration
	// WireBytes is what this process sent to the others, frame headers
	// included (0 in a single process).
	WireBytes int64
	// RestoredFrom is the checkpoint the job started from (0: none).
	RestoredFrom uint64
	// Counters are the job's counts by name: "records" and "late" (as
	// Records and Late) and what Counted inputs count, such as
	// "dead_letters". In a distributed job Records, Late and Counters are
	// totals over all processes, from the summaries they exchange: once
	// Run has returned they are final, but for the processes in Missing,
	// whose final summary did not arrive (counted as last heard).
	Counters  map[string]int64
	Missing   []int
	Processes int
	// StoppedAt is the checkpoint a job stopped cleanly at (Run returned
	// ErrStopped), from which the next run resumes.
	StoppedAt uint64
}

// Metrics returns the job's figures so far.
func (j *Job) Metrics() Metrics {
	j.mu.Lock()
	defer j.mu.Unlock()
	m := Metrics{Epochs: j.epochs, Elapsed: j.elapsed, WireBytes: j.wireBytes.Load(), Processes: j.processes()}
	if j.coord != nil {
		m.RestoredFrom = j.coord.from
	}
	m.StoppedAt = j.stoppedAt
	x := j.summaries
	j.mu.Unlock()
	m.Counters = j.localCounts()
	if x != nil {
		m.Counters, m.Missing = x.Board().Totals(j.Process(), summary.Counts(m.Counters))
	}
	m.Records, m.Late = m.Counters["records"], m.Counters["late"]
	j.mu.Lock()
	if len(j.latencies) > 0 {
		l := append([]time.Duration(nil), j.latencies...)
		sort.Slice(l, func(a, b int) bool { return l[a] < l[b] })
		m.LatencyP50 = l[len(l)*50/100]
		m.LatencyP99 = l[min(len(l)-1, len(l)*99/100)]
		m.LatencyMax = l[len(l)-1]
	}
	return m
}
