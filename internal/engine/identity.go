package engine

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
	part := j.Cfg.Partitioning
	if part == "" {
		part = "auto"
	}
	id := jobid.Identity{
		{Name: "key-groups", Value: fmt.Sprint(j.Cfg.KeyGroups)},
		{Name: "partitioning", Value: part},
		{Name: "ordered", Value: fmt.Sprint(j.Cfg.Ordered)},
	}
	for _, n := range j.Nodes {
		var b strings.Builder
		fmt.Fprintf(&b, "%s, %s, %s", n.Op, n.State, n.Sel)
		if n.Key != "" {
			fmt.Fprintf(&b, ", key %s", n.Key)
		}
		if n.Params != "" {
			fmt.Fprintf(&b, ", %s", n.Params)
		}
		for i, in := range n.Inputs {
			fmt.Fprintf(&b, ", input %d from %s", i, in.From.Name)
			if in.FromPort > 0 {
				fmt.Fprintf(&b, " port %d", in.FromPort)
			}
			if in.Keyed {
				b.WriteString(" keyed")
			}
		}
		id = append(id, jobid.Entry{Name: "operator " + n.Name, Value: b.String()})
		if n.Kind == plan.Source {
			id = append(id, jobid.Entry{Name: "source " + n.Name, Value: n.Source})
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
