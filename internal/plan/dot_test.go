package plan

import (
	"regexp"
	"strings"
	"testing"
)

func TestDot(t *testing.T) {
	p, err := Build([]Node{
		{ID: 0, Name: "src", Op: "source", Kind: Source, Parallelism: 2},
		{ID: 1, Name: `map "x"`, Op: "map", Kind: Op, State: Stateless, Selectivity: ExactlyOne, Parallelism: 2, Inputs: []Input{{From: 0}}},
		{ID: 2, Name: "window", Op: "window(tumbling 1s)", Kind: Inboxed, State: Keyed, Parallelism: 2, Inputs: []Input{{From: 1, Keyed: true}}},
		{ID: 3, Name: "sink", Op: "sink", Kind: Sink, Parallelism: 1, Inputs: []Input{{From: 2}}},
	}, Config{Workers: 2, KeyGroups: 128})
	if err != nil {
		t.Fatal(err)
	}
	dot := p.Dot("job")
	if !strings.HasPrefix(dot, `digraph "job" {`) || !strings.HasSuffix(dot, "}\n") {
		t.Fatalf("not a digraph:\n%s", dot)
	}
	if n := strings.Count(dot, "subgraph cluster_"); n != len(p.Tasks)+len(p.Regions) {
		t.Errorf("%d clusters, want one per task and region (%d)", n, len(p.Tasks)+len(p.Regions))
	}
	declared := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^      (n\d+) \[label=`).FindAllStringSubmatch(dot, -1) {
		declared[m[1]] = true
	}
	if len(declared) != 4 {
		t.Errorf("%d nodes declared, want 4:\n%s", len(declared), dot)
	}
	edges := regexp.MustCompile(`(?m)^  (n\d+) -> (n\d+)( \[style=dashed, label="([\w ,-]+)"\])?;$`).FindAllStringSubmatch(dot, -1)
	if len(edges) != len(p.Edges) {
		t.Fatalf("%d edges, want %d:\n%s", len(edges), len(p.Edges), dot)
	}
	kinds := map[string]bool{}
	for _, e := range edges {
		if !declared[e[1]] || !declared[e[2]] {
			t.Errorf("edge %s -> %s between undeclared nodes", e[1], e[2])
		}
		kinds[e[4]] = true
	}
	for _, k := range []string{"", "keygroup shuffle", "gather"} { // "" is the fused edge
		if !kinds[k] {
			t.Errorf("no %q edge in:\n%s", k, dot)
		}
	}
	if !strings.Contains(dot, `"map \"x\"\nmap; stateless 1:1"`) {
		t.Errorf("labels are not quoted:\n%s", dot)
	}
	if strings.Count(dot, "{") != strings.Count(dot, "}") {
		t.Errorf("unbalanced braces:\n%s", dot)
	}
}
