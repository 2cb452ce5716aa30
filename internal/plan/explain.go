package plan

import (
	"fmt"
	"sort"
	"strings"
)

// Explain renders the plan for people: the logical graph (each operator
// with its inputs), then each region with its parallelism,
// kind and order strategy, the tasks (fused chains) in it, every
// operator's declared state and selectivity, and the exchange on every
// edge that is not fused.
func (p *Physical) Explain() string {
	byID := p.byID()
	var b strings.Builder
	b.WriteString("graph\n")
	for _, n := range p.Nodes {
		fmt.Fprintf(&b, "  %s", n.Name)
		for i, in := range n.Inputs {
			sep := " <- "
			if i > 0 {
				sep = ", "
			}
			b.WriteString(sep + byID[in.From].Name)
			if in.Keyed {
				b.WriteString(" by key")
			}
		}
		b.WriteString("\n")
	}
	for _, r := range p.Regions {
		fmt.Fprintf(&b, "region %d  x%d  %s", r.ID, r.Parallelism, r.Kind())
		if r.Order != NoOrder {
			fmt.Fprintf(&b, "  exit: %s", r.Order)
		}
		b.WriteString("\n")
		for ti, t := range p.Tasks {
			if p.RegionOf[t.Head] != r.ID {
				continue
			}
			fmt.Fprintf(&b, "  task %d\n", ti)
			for j, id := range t.Nodes {
				n := byID[id]
				lead := "    ├─"
				if j == 0 {
					lead = "    ■ "
				}
				fmt.Fprintf(&b, "%s %s [%s]", lead, n.Name, describe(n))
				var ins []string
				for _, e := range p.Edges {
					if e.To == id && !e.Fused {
						ins = append(ins, fmt.Sprintf("%s from %s", p.Label(e), byID[e.From].Name))
					}
				}
				sort.Strings(ins)
				if len(ins) > 0 {
					fmt.Fprintf(&b, "  <- %s", strings.Join(ins, ", "))
				}
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// describe is an operator's kind with what it declared.
func describe(n Node) string {
	switch n.Kind {
	case Source, Sink:
		return n.Op
	}
	s := n.Op + "; " + n.State.String()
	if n.State == Keyed && n.Key != "" {
		s += " by " + n.Key
	}
	return s + " " + n.Selectivity.String()
}

// Label names an edge's exchange: a split leaves one instance for many, a
// shuffle connects two parallel regions instance to instance (every
// sender routes to every receiver itself, with no central merge), and an
// ordered gather is a merge.
func (p *Physical) Label(e Edge) string {
	byID := p.byID()
	from := byID[e.From].Parallelism
	s := e.Exchange.String()
	switch {
	case e.Exchange == Gather && e.Ordered:
		s = "ordered merge"
	case e.Exchange == Forward || e.Exchange == Gather:
	case from == 1:
		s += " split"
	default:
		s += " shuffle"
	}
	if e.Ordered && e.Exchange != Gather {
		s += ", ordered"
	}
	return s
}

func (p *Physical) byID() map[int]Node {
	m := make(map[int]Node, len(p.Nodes))
	for _, n := range p.Nodes {
		m[n.ID] = n
	}
	return m
}
