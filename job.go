package weir

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/runtime"
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

	mu        sync.Mutex
	latencies []time.Duration
	epochs    int64
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
	id     int
	name   string
	op     string
	kind   plan.Kind
	par    int // 0: the job's default
	inputs []input
	// ports[i] combines the pushers of output port i's consumers.
	ports []func(outs []any) any
	// Exactly one of these is set, by kind.
	newSource func(inst, par int, outs []any) (runtime.SourceTask, error)
	newOp     func(inst int, outs []any) (any, error)
	newTask   func(inst int, outs []any) (runtime.InputTask, error)
}

// input is an edge into a node, with the factory of its sending side.
type input struct {
	from     *node
	fromPort int
	keyed    bool
	// exchange makes the sender for one upstream instance. It returns a
	// pusher of the upstream type.
	exchange func(x exchangeCtx) any
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

func (j *Job) parallelism(n *node) int {
	if n.par > 0 {
		return n.par
	}
	if n.kind == plan.Sink {
		return 1
	}
	return j.cfg.workers
}

func (j *Job) plan() (*plan.Physical, error) {
	if j.err != nil {
		return nil, j.err
	}
	if len(j.nodes) == 0 {
		return nil, errors.New("weir: job has no operators")
	}
	nodes := make([]plan.Node, len(j.nodes))
	for i, n := range j.nodes {
		pn := plan.Node{ID: n.id, Name: n.name, Op: n.op, Kind: n.kind, Parallelism: j.parallelism(n)}
		if n.kind == plan.Stateful && n.inputs[0].keyed && pn.Parallelism > j.cfg.keyGroups {
			pn.Parallelism = j.cfg.keyGroups
		}
		for port, in := range n.inputs {
			pn.Inputs = append(pn.Inputs, plan.Input{From: in.from.id, FromPort: in.fromPort, Port: port, Keyed: in.keyed})
		}
		nodes[i] = pn
	}
	return plan.Build(nodes)
}

// Explain returns the physical plan: tasks, their parallelism, the fused
// operators of each and the exchanges between them.
func (j *Job) Explain() (string, error) {
	p, err := j.plan()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("job %s: %d workers, %d key groups, epochs %s\n%s",
		j.name, j.cfg.workers, j.cfg.keyGroups, j.epochDesc(), p.Explain()), nil
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
	p, err := j.plan()
	if err != nil {
		return err
	}
	var rt *runtime.Runtime
	rt = runtime.New(runtime.Config{
		Interval: j.cfg.interval,
		Records:  j.cfg.epochRecords,
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
	if err := j.instantiate(p, rt); err != nil {
		return err
	}
	j.mu.Lock()
	j.rt = rt
	j.mu.Unlock()
	err = rt.Run(ctx)
	j.mu.Lock()
	j.mu.Unlock()
	return err
}

// instantiate makes every operator instance and wires the exchanges.
func (j *Job) instantiate(p *plan.Physical, rt *runtime.Runtime) error {
	par := map[int]int{}
	for _, pn := range p.Nodes {
		par[pn.ID] = pn.Parallelism
	}
	// Inboxes of task heads that are not sources.
	inboxes := map[int][]*runtime.Inbox{}
	for _, t := range p.Tasks {
		n := j.nodes[t.Head]
		if n.kind == plan.Source {
			continue
		}
		for i := 0; i < t.Parallelism; i++ {
			inboxes[n.id] = append(inboxes[n.id], rt.NewInbox(n.name, i, j.cfg.queueDepth))
		}
	}
	// Consumers of each output port.
	outEdges := map[[2]int][]plan.Edge{}
	hasRemote := map[int]bool{} // task index -> has a non-fused out edge
	for _, e := range p.Edges {
		outEdges[[2]int{e.From, e.FromPort}] = append(outEdges[[2]int{e.From, e.FromPort}], e)
		if !e.Fused {
			hasRemote[p.TaskOf[e.From]] = true
		}
	}
	var build func(id, inst int) (any, error)
	outputs := func(id, inst int) ([]any, error) {
		n := j.nodes[id]
		outs := make([]any, len(n.ports))
		for port := range n.ports {
			var cons []any
			for _, e := range outEdges[[2]int{id, port}] {
				if e.Fused {
					c, err := build(e.To, inst)
					if err != nil {
						return nil, err
					}
					cons = append(cons, c)
					continue
				}
				var outlets []runtime.Outlet
				to := inboxes[e.To]
				switch e.Exchange {
				case plan.Forward:
					outlets = []runtime.Outlet{to[inst].Sender(e.Port)}
				case plan.Gather:
					outlets = []runtime.Outlet{to[0].Sender(e.Port)}
				default:
					for _, in := range to {
						outlets = append(outlets, in.Sender(e.Port))
					}
				}
				recv := j.nodes[e.To]
				cons = append(cons, recv.inputs[e.Port].exchange(exchangeCtx{
					ex: e.Exchange, outlets: outlets, name: recv.name,
					sender: inst, senders: par[id], done: rt.Done(),
				}))
			}
			outs[port] = n.ports[port](cons)
		}
		return outs, nil
	}
	build = func(id, inst int) (any, error) {
		outs, err := outputs(id, inst)
		if err != nil {
			return nil, err
		}
		return j.nodes[id].newOp(inst, outs)
	}
	// Readers opened so far, closed again if a later one fails to open.
	var opened []runtime.SourceTask
	fail := func(err error) error {
		for _, st := range opened {
			st.Close()
		}
		return err
	}
	for ti, t := range p.Tasks {
		n := j.nodes[t.Head]
		terminal := !hasRemote[ti]
		for inst := 0; inst < t.Parallelism; inst++ {
			outs, err := outputs(n.id, inst)
			if err != nil {
				return fail(err)
			}
			if n.kind == plan.Source {
				st, err := n.newSource(inst, t.Parallelism, outs)
				if err != nil {
					return fail(fmt.Errorf("%s#%d: %w", n.name, inst, err))
				}
				opened = append(opened, st)
				rt.AddSource(n.name, inst, st, terminal)
				continue
			}
			it, err := n.newTask(inst, outs)
			if err != nil {
				return fail(fmt.Errorf("%s#%d: %w", n.name, inst, err))
			}
			rt.AddTask(n.name, inst, inboxes[n.id][inst], it, terminal)
		}
	}
	return nil
}

type lateCounter struct {
	name string
	n    *atomic.Int64
}

// Metrics summarises a finished (or running) job.
type Metrics struct {
	Records int64
	// Late is the number of records that arrived after their windows'
	// allowed lateness, over all window operators.
	Late       int64
	Epochs     int64
	LatencyP50 time.Duration
	LatencyP99 time.Duration
	LatencyMax time.Duration
}

// Metrics returns the job's figures so far.
func (j *Job) Metrics() Metrics {
	j.mu.Lock()
	defer j.mu.Unlock()
	m := Metrics{Epochs: j.epochs}
	if j.rt != nil {
		m.Records = j.rt.Records()
	}
	for _, c := range j.lateCounters {
		m.Late += c.n.Load()
	}
	if len(j.latencies) > 0 {
		l := append([]time.Duration(nil), j.latencies...)
		sort.Slice(l, func(a, b int) bool { return l[a] < l[b] })
		m.LatencyP50 = l[len(l)*50/100]
		m.LatencyP99 = l[min(len(l)-1, len(l)*99/100)]
		m.LatencyMax = l[len(l)-1]
	}
	return m
}
