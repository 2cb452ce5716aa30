package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// Dot renders the plan in Graphviz's dot language: one cluster per task
// (labelled with its parallelism), one box per operator, solid edges for
// fused operators and dashed edges labelled with the exchange kind for
// everything that crosses tasks.
func (p *Physical) Dot(title string) string {
	byID := map[int]Node{}
	for _, n := range p.Nodes {
		byID[n.ID] = n
	}
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", strconv.Quote(title))
	b.WriteString("  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\"];\n")
	for i, t := range p.Tasks {
		fmt.Fprintf(&b, "  subgraph cluster_%d {\n    label=%s;\n", i, strconv.Quote(fmt.Sprintf("task %d x%d", i, t.Parallelism)))
		for _, id := range t.Nodes {
			n := byID[id]
			fmt.Fprintf(&b, "    n%d [label=%s];\n", id, strconv.Quote(n.Name+"\n"+n.Op))
		}
		b.WriteString("  }\n")
	}
	for _, e := range p.Edges {
		if e.Fused {
			fmt.Fprintf(&b, "  n%d -> n%d;\n", e.From, e.To)
			continue
		}
		fmt.Fprintf(&b, "  n%d -> n%d [style=dashed, label=%s];\n", e.From, e.To, strconv.Quote(e.Exchange.String()))
	}
	b.WriteString("}\n")
	return b.String()
}
