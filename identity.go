package weir

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/internal/jobid"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/transport"
)

// identity is what determines the job's results, entry by entry: its key
// groups, partitioning and ordering, and every operator by name with its
// declarations, parameters, record types and inputs, a source with its
// input's identity. What does not change results is left out:
// the job's name, parallelism, pacing, outputs' paths, checkpoint cadence, the binary.
func (j *Job) identity() jobid.Identity {
	part := j.cfg.partitioning
	if part == "" {
		part = "auto"
	}
	id := jobid.Identity{
		{Name: "key-groups", Value: fmt.Sprint(j.cfg.keyGroups)},
		{Name: "partitioning", Value: part},
		{Name: "ordered", Value: fmt.Sprint(j.cfg.ordered)},
	}
	for _, n := range j.nodes {
		var b strings.Builder
		fmt.Fprintf(&b, "%s, %s, %s", n.op, n.state, n.sel)
		if n.key != "" {
			fmt.Fprintf(&b, ", key %s", n.key)
		}
		if n.params != "" {
			fmt.Fprintf(&b, ", %s", n.params)
		}
		for i, in := range n.inputs {
			fmt.Fprintf(&b, ", input %d from %s", i, in.from.name)
			if in.fromPort > 0 {
				fmt.Fprintf(&b, " port %d", in.fromPort)
			}
			if in.keyed {
				b.WriteString(" keyed")
			}
		}
		id = append(id, jobid.Entry{Name: "operator " + n.name, Value: b.String()})
		if n.kind == plan.Source {
			id = append(id, jobid.Entry{Name: "source " + n.name, Value: n.source})
		}
	}
	return id
}

// identitySettings lists the job's identity (identity.go) as mesh
// settings: its operators with their parameters and each source's input
// (files in order, with their sizes; a generator's parameters), so that a
// process given other inputs is refused naming the source.
func (j *Job) identitySettings() []transport.Setting {
	id := j.identity()
	s := make([]transport.Setting, 0, len(id))
	for _, e := range id {
		switch e.Name {
		case "key-groups", "partitioning", "ordered":
			continue // named by their flags already
		}
		s = append(s, transport.Setting{Name: e.Name, Value: e.Value})
	}
	return s
}
