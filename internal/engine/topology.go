package engine

import (
	"github.com/weirstream/weir/internal/plan"
)

// Topology is the job graph as it runs: its tasks (chains of fused
// operators, one goroutine per instance) and the exchanges between them,
// taken from the physical plan that Explain prints. The JSON tags are the
// dashboard's wire form.
type Topology struct {
	Job       string `json:"job"`
	Processes int    `json:"processes"`
	// Workers is the instances per process of a replicated operator;
	// KeyGroups the number of key groups keyed state is split into.
	Workers   int            `json:"workers"`
	KeyGroups int            `json:"key_groups"`
	Tasks     []TopologyTask `json:"tasks"`
	Edges     []TopologyEdge `json:"edges"`
}

// TopologyTask is one task: its operators, head first. Name is the
// operators' names joined by "→", as metrics.InstanceStats names an
// instance's operator.
type TopologyTask struct {
	ID          int                `json:"id"`
	Name        string             `json:"name"`
	Operators   []TopologyOperator `json:"operators"`
	Parallelism int                `json:"parallelism"`
	Region      int                `json:"region"`
	// Kind is the head's: "source", "op", "sink" or "inboxed" (a window,
	// join or union, fed through an inbox).
	Kind  string `json:"kind"`
	Keyed bool   `json:"keyed,omitempty"`
	// Layer is the task's depth: 0 for sources, else one more than the
	// deepest task it reads from.
	Layer int `json:"layer"`
}

// TopologyOperator is one operator of a task.
type TopologyOperator struct {
	Name string `json:"name"`
	Op   string `json:"op"`
}

// TopologyEdge is an exchange between two tasks (fused edges stay inside
// a task): From and To are task IDs, Exchange the edge's label as
// Explain prints it ("keygroup shuffle", "gather", ...).
type TopologyEdge struct {
	From     int    `json:"from"`
	To       int    `json:"to"`
	Exchange string `json:"exchange"`
}

// Topology returns the job graph, or an error if the job cannot be
// planned.
func (j *Job) Topology() (Topology, error) {
	p, err := j.plan()
	if err != nil {
		return Topology{}, err
	}
	t := topologyOf(p)
	t.Job, t.Processes, t.Workers, t.KeyGroups = j.Name, j.Processes(), j.Cfg.Workers, j.Cfg.KeyGroups
	return t, nil
}

var kindNames = map[plan.Kind]string{plan.Source: "source", plan.Op: "op", plan.Sink: "sink", plan.Inboxed: "inboxed"}

// topologyOf is p's tasks and the edges between them. Nodes and tasks are
// in topological order, so a task's layer is known once the tasks before
// it have theirs.
func topologyOf(p *plan.Physical) Topology {
	byID := make(map[int]plan.Node, len(p.Nodes))
	for _, n := range p.Nodes {
		byID[n.ID] = n
	}
	var t Topology
	_, chains := taskNames(p, func(id int) string { return byID[id].Name })
	for i, pt := range p.Tasks {
		head := byID[pt.Head]
		tt := TopologyTask{ID: i, Parallelism: pt.Parallelism, Region: p.RegionOf[pt.Head], Kind: kindNames[head.Kind]}
		for _, id := range pt.Nodes {
			n := byID[id]
			tt.Operators = append(tt.Operators, TopologyOperator{Name: n.Name, Op: n.Op})
			tt.Keyed = tt.Keyed || (n.State == plan.Keyed && pt.Parallelism > 1)
		}
		tt.Name = chains[i]
		t.Tasks = append(t.Tasks, tt)
	}
	for _, e := range p.Edges {
		if e.Fused {
			continue
		}
		from, to := p.TaskOf[e.From], p.TaskOf[e.To]
		t.Edges = append(t.Edges, TopologyEdge{From: from, To: to, Exchange: p.Label(e)})
		if l := t.Tasks[from].Layer + 1; l > t.Tasks[to].Layer {
			t.Tasks[to].Layer = l
		}
	}
	return t
}
