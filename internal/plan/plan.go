package plan

import (
	"fmt"
)

// Exchange is how records cross an edge between instances.
type Exchange int

const (
	// Forward keeps records on the instance with the same index.
	Forward Exchange = iota
	// Rebalance spreads records round-robin over the receiver's instances.
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
		return "round-robin"
	case KeyGroup:
		return "keygroup"
	case Gather:
		return "gather"
	}
	return fmt.Sprintf("exchange(%d)", int(e))
}

// Kind says how an operator is fed.
type Kind int

const (
	// Source operators start tasks and have no inputs.
	Source Kind = iota
	// Op is a one-input record-at-a-time operator (map, filter, flatmap,
	// process): it can be fused into its input's task.
	Op
	// Sink operators consume a stream; they can be fused.
	Sink
	// Inboxed operators (windows, joins, unions) always run in a task of
	// their own, fed through an inbox.
	Inboxed
)

// State is what an operator remembers between records, which decides
// whether it may be replicated.
type State int

const (
	// Unkeyed state spans all records: the operator runs as one instance.
	// It is the zero value, so an operator that declares nothing is never
	// replicated.
	Unkeyed State = iota
	// Stateless operators may run in any number of instances.
	Stateless
	// Keyed state is partitioned by the node's Key: instances own disjoint
	// key groups.
	Keyed
)

func (s State) String() string {
	switch s {
	case Stateless:
		return "stateless"
	case Keyed:
		return "keyed"
	}
	return "unkeyed state"
}

// Selectivity is how many outputs an operator makes per input.
type Selectivity int

const (
	// AnyNumber outputs per input (prolific, or unknown).
	AnyNumber Selectivity = iota
	// ExactlyOne output per input.
	ExactlyOne
	// AtMostOne output per input (selective).
	AtMostOne
)

func (s Selectivity) String() string {
	switch s {
	case ExactlyOne:
		return "1:1"
	case AtMostOne:
		return "1:0..1"
	}
	return "1:n"
}

// Node is an operator of the logical graph.
type Node struct {
	ID          int
	Name        string
	Op          string // "map", "window(tumbling 10s)", ...
	Kind        Kind
	State       State
	Selectivity Selectivity
	// Key names the key of a keyed operator: its attribute and type.
	// Keyed operators with the same Key may share a region without a
	// shuffle; an empty Key is compatible with none.
	Key string
	// Parallelism is the user's choice, or 0 to let the planner decide.
	Parallelism int
	Inputs      []Input
}

// Input is an edge into a node.
type Input struct {
	From     int // node ID
	FromPort int // output port of From
	Port     int // input port of the node
	// Keyed asks for records partitioned by the node's Key.
	Keyed bool
}

// Config is what the planner needs besides the graph.
type Config struct {
	// Workers is the parallelism of replicable operators (at least 1).
	Workers int
	// KeyGroups bounds the parallelism of keyed operators.
	KeyGroups int
	// Ordered asks that every region exit restore the input order.
	Ordered bool
}

// Physical is the plan.
type Physical struct {
	Config Config
	// Nodes are the input nodes with Parallelism decided.
	Nodes   []Node
	Tasks   []Task
	Edges   []Edge
	Regions []Region
	// TaskOf and RegionOf map a node ID to the index of its task and region.
	TaskOf   map[int]int
	RegionOf map[int]int
	// Ordered tells, per node ID, whether the node's output is in the
	// input order (units in sequence; see Edge.Ordered).
	Ordered map[int]bool
	// Whole tells, per ordered node ID, whether each of its instances
	// processes whole units (serial and round-robin regions) or the part
	// its key groups own (keyed regions).
	Whole map[int]bool
}

// Task is a chain of fused operators with one head.
type Task struct {
	Head        int
	Nodes       []int // head first, then fused nodes in graph order
	Parallelism int
}

// Edge is a physical edge.
type Edge struct {
	From, FromPort, To, Port int
	Exchange                 Exchange
	Fused                    bool
	// Ordered edges carry numbered units: the receiver reads them in
	// sequence and restores the input order.
	Ordered bool
	// Whole is set on an ordered edge whose sending instances each process
	// whole units (a serial or round-robin region); otherwise each holds
	// the part of every unit its key groups own, and the receiver merges
	// the parts by sequence number.
	Whole bool
}

// Build makes the physical plan. Nodes must be in topological order (every
// input refers to an earlier node), which is how a job builds them.
func Build(nodes []Node, cfg Config) (*Physical, error) {
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	if cfg.KeyGroups < 1 {
		cfg.KeyGroups = 1
	}
	p := &Physical{Config: cfg, TaskOf: map[int]int{}, RegionOf: map[int]int{}, Ordered: map[int]bool{}, Whole: map[int]bool{}}
	byID := map[int]*Node{}
	for i := range nodes {
		n := nodes[i]
		par, err := parallelism(n, cfg)
		if err != nil {
			return nil, err
		}
		n.Parallelism = par
		if n.Kind == Source && len(n.Inputs) > 0 {
			return nil, fmt.Errorf("plan: source %s has inputs", n.Name)
		}
		if n.Kind != Source && len(n.Inputs) == 0 {
			return nil, fmt.Errorf("plan: %s has no input", n.Name)
		}
		if (n.Kind == Op || n.Kind == Sink) && len(n.Inputs) != 1 {
			return nil, fmt.Errorf("plan: %s has %d inputs; a record operator has one", n.Name, len(n.Inputs))
		}
		region := -1
		ordered := cfg.Ordered && n.Kind != Inboxed
		whole := n.Kind == Source
		for _, in := range n.Inputs {
			from, ok := byID[in.From]
			if !ok {
				return nil, fmt.Errorf("plan: %s reads from unknown or later node %d", n.Name, in.From)
			}
			e := Edge{From: in.From, FromPort: in.FromPort, To: n.ID, Port: in.Port}
			e.Exchange = exchange(n, in, from, p.Regions[p.RegionOf[from.ID]])
			e.Fused = len(n.Inputs) == 1 && e.Exchange == Forward && (n.Kind == Op || n.Kind == Sink)
			ordered = ordered && p.Ordered[from.ID]
			e.Ordered = ordered && e.Exchange != Forward
			e.Whole = p.Whole[from.ID]
			switch {
			case !ordered:
			case e.Exchange == KeyGroup:
				whole = n.Parallelism == 1
			case e.Exchange == Forward:
				whole = p.Whole[from.ID]
			default:
				whole = true
			}
			if e.Fused {
				t := p.TaskOf[in.From]
				p.Tasks[t].Nodes = append(p.Tasks[t].Nodes, n.ID)
				p.TaskOf[n.ID] = t
			}
			if len(n.Inputs) == 1 && e.Exchange == Forward {
				region = p.RegionOf[from.ID]
			}
			p.Edges = append(p.Edges, e)
		}
		p.Ordered[n.ID] = ordered
		p.Whole[n.ID] = ordered && whole
		if _, fused := p.TaskOf[n.ID]; !fused {
			p.TaskOf[n.ID] = len(p.Tasks)
			p.Tasks = append(p.Tasks, Task{Head: n.ID, Nodes: []int{n.ID}, Parallelism: n.Parallelism})
		}
		if region < 0 {
			region = len(p.Regions)
			p.Regions = append(p.Regions, Region{ID: region, Parallelism: n.Parallelism})
		}
		r := &p.Regions[region]
		r.Nodes = append(r.Nodes, n.ID)
		if n.State == Keyed && !r.Keyed && r.Parallelism > 1 {
			r.Keyed, r.Key = true, n.Key
		}
		if n.Selectivity != ExactlyOne && (n.Kind == Op || n.Kind == Inboxed) {
			r.drops = true
		}
		p.RegionOf[n.ID] = region
		p.Nodes = append(p.Nodes, n)
		byID[n.ID] = &p.Nodes[len(p.Nodes)-1]
	}
	p.orderStrategies()
	return p, nil
}

// parallelism decides a node's instance count: the user's choice where it
// is safe, one instance for unkeyed state and sinks, the workers for the
// rest (keyed operators at most one per key group). An ordered job reads
// each source in one instance, since its order is the input order.
func parallelism(n Node, cfg Config) (int, error) {
	if n.Parallelism < 0 {
		return 0, fmt.Errorf("plan: %s has parallelism %d", n.Name, n.Parallelism)
	}
	switch {
	case n.Kind == Source && cfg.Ordered:
		if n.Parallelism > 1 {
			return 0, fmt.Errorf("plan: source %s has parallelism %d, but an ordered job reads each source in one instance", n.Name, n.Parallelism)
		}
		return 1, nil
	case n.State == Unkeyed && n.Kind != Source && n.Kind != Sink:
		if n.Parallelism > 1 {
			return 0, fmt.Errorf("plan: %s keeps unkeyed state and cannot run in %d instances; declare it stateless or keyed", n.Name, n.Parallelism)
		}
		return 1, nil
	case n.Parallelism > 0:
		if n.State == Keyed && n.Parallelism > cfg.KeyGroups {
			return cfg.KeyGroups, nil
		}
		return n.Parallelism, nil
	case n.Kind == Sink:
		return 1, nil
	case n.State == Keyed:
		return min(cfg.Workers, cfg.KeyGroups), nil
	}
	return cfg.Workers, nil
}

// exchange decides how records of in reach n. A keyed input stays on its
// instance only when the sending region is already partitioned by the same
// key at the same parallelism (or both sides have one instance), and n is
// a record operator: windows and joins always take their input through
// their own key-group exchange, which pre-aggregates or partitions it per
// epoch.
func exchange(n Node, in Input, from *Node, r Region) Exchange {
	same := n.Parallelism == from.Parallelism
	switch {
	case in.Keyed && same && (n.Parallelism == 1 || (n.Kind == Op && n.Key != "" && r.Key == n.Key)):
		return Forward
	case in.Keyed:
		return KeyGroup
	case same:
		return Forward
	case n.Parallelism == 1:
		return Gather
	}
	return Rebalance
}
