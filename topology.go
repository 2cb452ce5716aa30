package weir

import "github.com/weirstream/weir/internal/engine"

// Topology returns the job graph as it runs: its tasks (chains of fused
// operators) with their parallelism, and the exchanges between them, from
// the same physical plan Explain prints. It fails only when the job
// cannot be planned (Run would fail the same way).
func (j *Job) Topology() (Topology, error) { return j.e.Topology() }

// Topology is the job graph: tasks and the exchanges between them.
type Topology = engine.Topology

// TopologyTask is one task of a Topology: a chain of fused operators.
type TopologyTask = engine.TopologyTask

// TopologyEdge is an exchange between two tasks of a Topology.
type TopologyEdge = engine.TopologyEdge

// TopologyOperator is one operator of a TopologyTask.
type TopologyOperator = engine.TopologyOperator
