package plan

import (
	"fmt"
	"sort"
	"strings"
)

// Exchange is how records cross an edge between instances.
type Exchange int

const (
	// Forward keeps records on the instance with the same index.
	Forward Exchange = iota
	// Rebalance spreads batches round-robin over the receiver's instances.
	Rebalance
	// KeyGroup routes each record to the owner of its key's key group.
	KeyGroup
	// Gather sends everything to the receiver's single instance.
	Gather
)

func (e Exchange) String() string {
	switch e {
	case Forward:
		return "forward"
	case Rebalance:
		return "rebalance"
	case KeyGroup:
		return "keygroup"
	case Gather:
		return "gather"
	}
	return fmt.Sprintf("exchange(%d)", int(e))
}

// Kind says how an operator may be placed.
type Kind int

const (
	// Source operators start tasks and have no inputs.
	Source Kind = iota
	// Stateless operators may be fused and replicated freely.
	Stateless
	// Sink operators consume a stream; they may be fused.
	Sink
	// Stateful operators (keyed windows, joins, unions) run in a task of
	// their own, fed through an inbox.
	Stateful
)

// Node is an operator of the logical graph.
type Node struct {
	ID          int
	Name        string
	Op          string // "map", "window(tumbling 10s)", ...
	Kind        Kind
	Parallelism int
	Inputs      []Input
}

// Input is an edge into a node.
type Input struct {
	From     int // node ID
	FromPort int // output port of From
	Port     int // input port of the node
	// Keyed asks for a key-group exchange.
	Keyed bool
}

// Edge is a physical edge.
type Edge struct {
	From, FromPort, To, Port int
	Exchange                 Exchange
	Fused                    bool
}

// Task is a chain of fused operators with one head.
type Task struct {
	Head        int
	Nodes       []int // head first, then fused nodes in graph order
	Parallelism int
}

// Physical is the plan.
type Physical struct {
	Nodes []Node
	Tasks []Task
	Edges []Edge
	// TaskOf maps a node ID to the index of its task.
	TaskOf map[int]int
}

// Build makes the physical plan. Nodes must be in topological order (every
// input refers to an earlier node), which is how a job builds them.
func Build(nodes []Node) (*Physical, error) {
	p := &Physical{Nodes: nodes, TaskOf: map[int]int{}}
	index := map[int]int{}
	for i, n := range nodes {
		if n.Parallelism < 1 {
			return nil, fmt.Errorf("plan: %s has parallelism %d", n.Name, n.Parallelism)
		}
		for _, in := range n.Inputs {
			j, ok := index[in.From]
			if !ok {
				return nil, fmt.Errorf("plan: %s reads from unknown or later node %d", n.Name, in.From)
			}
			from := nodes[j]
			e := Edge{From: in.From, FromPort: in.FromPort, To: n.ID, Port: in.Port}
			switch {
			case in.Keyed:
				e.Exchange = KeyGroup
			case n.Parallelism == from.Parallelism:
				e.Exchange = Forward
			case n.Parallelism == 1:
				e.Exchange = Gather
			default:
				e.Exchange = Rebalance
			}
			e.Fused = len(n.Inputs) == 1 && e.Exchange == Forward &&
				(n.Kind == Stateless || n.Kind == Sink)
			p.Edges = append(p.Edges, e)
			if e.Fused {
				t := p.TaskOf[in.From]
				p.Tasks[t].Nodes = append(p.Tasks[t].Nodes, n.ID)
				p.TaskOf[n.ID] = t
			}
		}
		if n.Kind == Source && len(n.Inputs) > 0 {
			return nil, fmt.Errorf("plan: source %s has inputs", n.Name)
		}
		if n.Kind != Source && len(n.Inputs) == 0 {
			return nil, fmt.Errorf("plan: %s has no input", n.Name)
		}
		if _, fused := p.TaskOf[n.ID]; !fused {
			p.TaskOf[n.ID] = len(p.Tasks)
			p.Tasks = append(p.Tasks, Task{Head: n.ID, Nodes: []int{n.ID}, Parallelism: n.Parallelism})
		}
		index[n.ID] = i
	}
	return p, nil
}

// Explain renders the plan for people.
func (p *Physical) Explain() string {
	byID := map[int]Node{}
	for _, n := range p.Nodes {
		byID[n.ID] = n
	}
	var b strings.Builder
	for i, t := range p.Tasks {
		fmt.Fprintf(&b, "task %d  x%d\n", i, t.Parallelism)
		for j, id := range t.Nodes {
			n := byID[id]
			lead := "  ├─"
			if j == 0 {
				lead = "  ■ "
			}
			fmt.Fprintf(&b, "%s %s [%s]", lead, n.Name, n.Op)
			var ins []string
			for _, e := range p.Edges {
				if e.To == id && !e.Fused {
					ins = append(ins, fmt.Sprintf("%s from %s", e.Exchange, byID[e.From].Name))
				}
			}
			sort.Strings(ins)
			if len(ins) > 0 {
				fmt.Fprintf(&b, "  <- %s", strings.Join(ins, ", "))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
