package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// Dot renders the plan in Graphviz's dot language: one cluster per region
// (labelled with its parallelism, kind and order strategy) holding one
// cluster per task, one box per operator, solid edges for fused operators
// and dashed edges labelled with the exchange for everything else.
func (p *Physical) Dot(title string) string {
	byID := p.byID()
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", strconv.Quote(title))
	b.WriteString("  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\"];\n")
	for _, r := range p.Regions {
		label := fmt.Sprintf("region %d x%d %s", r.ID, r.Parallelism, r.Kind())
		if r.Order != NoOrder {
			label += "\nexit: " + r.Order.String()
		}
		fmt.Fprintf(&b, "  subgraph cluster_r%d {\n    label=%s;\n    style=rounded;\n", r.ID, strconv.Quote(label))
		for i, t := range p.Tasks {
			if p.RegionOf[t.Head] != r.ID {
				continue
			}
			fmt.Fprintf(&b, "    subgraph cluster_%d {\n      label=%s;\n      style=dotted;\n", i, strconv.Quote(fmt.Sprintf("task %d", i)))
			for _, id := range t.Nodes {
				n := byID[id]
				fmt.Fprintf(&b, "      n%d [label=%s];\n", id, strconv.Quote(n.Name+"\n"+describe(n)))
			}
			b.WriteString("    }\n")
		}
		b.WriteString("  }\n")
	}
	for _, e := range p.Edges {
		if e.Fused {
			fmt.Fprintf(&b, "  n%d -> n%d;\n", e.From, e.To)
			continue
		}
		fmt.Fprintf(&b, "  n%d -> n%d [style=dashed, label=%s];\n", e.From, e.To, strconv.Quote(p.Label(e)))
	}
	b.WriteString("}\n")
	return b.String()
}
