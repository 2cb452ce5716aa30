package weir

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/weirstream/weir/internal/jobid"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/transport"
)

// Identified is an Input that says what it reads, for the job's identity:
// a checkpoint records the identity of the job that took it, and a job
// refuses to resume from checkpoints of another, and the processes of a
// distributed job refuse peers that run another. Identity should name
// everything that decides the records the input produces (files in order
// with their sizes, a generator's parameters) and nothing that does not
// (a replay pace, a batch size). An Input that does not implement it is
// identified by its type alone.
type Identified interface {
	Identity() string
}

// identify returns what names an input in the job's identity.
func identify(in any) string {
	if id, ok := in.(Identified); ok {
		return id.Identity()
	}
	return fmt.Sprintf("%T", in)
}

// Identity implements Identified: the number and type of the records.
func (s SliceSource[T]) Identity() string {
	return fmt.Sprintf("%d records of %v", len(s.Records), reflect.TypeFor[T]())
}

// Identity implements Identified: the paced input's (pacing does not
// change the records).
func (p pacedInput[T]) Identity() string { return identify(p.in) }

// typeList names types for an operator's identity.
func typeList(ts ...reflect.Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

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

// Counters implements Counted: the paced input's, if it counts.
func (p pacedInput[T]) Counters() map[string]int64 {
	if c, ok := p.in.(Counted); ok {
		return c.Counters()
	}
	return nil
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
