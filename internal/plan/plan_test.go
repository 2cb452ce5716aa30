package plan

import (
	"strings"
	"testing"
)

// Shorthands for test graphs.
func src(id int) Node { return Node{ID: id, Name: "src", Op: "source", Kind: Source} }

func op(id, from int, st State, sel Selectivity) Node {
	return Node{ID: id, Name: "op", Op: "map", Kind: Op, State: st, Selectivity: sel, Inputs: []Input{{From: from}}}
}

func keyed(id, from int, key string) Node {
	return Node{ID: id, Name: "keyed", Op: "process", Kind: Op, State: Keyed, Key: key, Selectivity: ExactlyOne, Inputs: []Input{{From: from, Keyed: true}}}
}

func sink(id, from int) Node {
	return Node{ID: id, Name: "sink", Op: "sink", Kind: Sink, Inputs: []Input{{From: from}}}
}

func withPar(n Node, p int) Node { n.Parallelism = p; return n }

func TestBuild(t *testing.T) {
	cfg := Config{Workers: 4, KeyGroups: 128}
	ordered := Config{Workers: 4, KeyGroups: 128, Ordered: true}
	tests := []struct {
		name    string
		cfg     Config
		nodes   []Node
		par     []int      // per node
		ex      []Exchange // per edge
		fused   []bool     // per edge
		regions int
		order   []Order // per region
	}{
		{
			name:    "stateless chain fuses into the source",
			cfg:     cfg,
			nodes:   []Node{src(0), op(1, 0, Stateless, ExactlyOne), op(2, 1, Stateless, AtMostOne), sink(3, 2)},
			par:     []int{4, 4, 4, 1},
			ex:      []Exchange{Forward, Forward, Gather},
			fused:   []bool{true, true, false},
			regions: 2,
		},
		{
			name:    "an operator that declares nothing runs in one instance between parallel regions",
			cfg:     cfg,
			nodes:   []Node{src(0), op(1, 0, Unkeyed, AnyNumber), op(2, 1, Stateless, ExactlyOne)},
			par:     []int{4, 1, 4},
			ex:      []Exchange{Gather, Rebalance},
			fused:   []bool{false, false},
			regions: 3,
		},
		{
			name:    "keyed operators with one key share a region",
			cfg:     cfg,
			nodes:   []Node{src(0), keyed(1, 0, "user"), op(2, 1, Stateless, ExactlyOne), keyed(3, 2, "user")},
			par:     []int{4, 4, 4, 4},
			ex:      []Exchange{KeyGroup, Forward, Forward},
			fused:   []bool{false, true, true},
			regions: 2,
		},
		{
			name:    "a different key shuffles",
			cfg:     cfg,
			nodes:   []Node{src(0), keyed(1, 0, "user"), keyed(2, 1, "ad")},
			par:     []int{4, 4, 4},
			ex:      []Exchange{KeyGroup, KeyGroup},
			fused:   []bool{false, false},
			regions: 3,
		},
		{
			name:    "an unnamed key is compatible with nothing",
			cfg:     cfg,
			nodes:   []Node{src(0), keyed(1, 0, ""), keyed(2, 1, "")},
			ex:      []Exchange{KeyGroup, KeyGroup},
			fused:   []bool{false, false},
			regions: 3,
		},
		{
			name:    "keyed parallelism is bounded by the key groups",
			cfg:     Config{Workers: 8, KeyGroups: 3},
			nodes:   []Node{src(0), keyed(1, 0, "k"), withPar(keyed(2, 1, "j"), 5)},
			par:     []int{8, 3, 3},
			ex:      []Exchange{KeyGroup, KeyGroup},
			regions: 3,
		},
		{
			name:    "a union is a task of its own",
			cfg:     cfg,
			nodes:   []Node{src(0), src(1), {ID: 2, Name: "union", Kind: Inboxed, State: Stateless, Inputs: []Input{{From: 0}, {From: 1, Port: 1}}}},
			ex:      []Exchange{Forward, Forward},
			fused:   []bool{false, false},
			regions: 3,
		},
		{
			name:    "ordered: one source instance, round-robin split and merge",
			cfg:     ordered,
			nodes:   []Node{src(0), op(1, 0, Stateless, ExactlyOne), op(2, 1, Stateless, ExactlyOne), sink(3, 2)},
			par:     []int{1, 4, 4, 1},
			ex:      []Exchange{Rebalance, Forward, Gather},
			fused:   []bool{false, true, false},
			regions: 3,
			order:   []Order{NoOrder, RoundRobinMerge, NoOrder},
		},
		{
			name:    "ordered: a filter needs pulses",
			cfg:     ordered,
			nodes:   []Node{src(0), op(1, 0, Stateless, AtMostOne), sink(2, 1)},
			regions: 3,
			order:   []Order{NoOrder, RoundRobinPulses, NoOrder},
		},
		{
			name:    "ordered: keyed regions merge by sequence number",
			cfg:     ordered,
			nodes:   []Node{src(0), keyed(1, 0, "k"), keyed(2, 1, "j"), op(3, 2, Stateless, AnyNumber), sink(4, 3)},
			regions: 4,
			order:   []Order{NoOrder, SequenceMerge, SequencePulses, NoOrder},
		},
		{
			name: "ordered: a window's output has no order to keep",
			cfg:  ordered,
			nodes: []Node{src(0), op(1, 0, Stateless, ExactlyOne),
				{ID: 2, Name: "window", Kind: Inboxed, State: Keyed, Key: "k", Inputs: []Input{{From: 1, Keyed: true}}},
				op(3, 2, Stateless, ExactlyOne), sink(4, 3)},
			regions: 4,
			// The region feeding the window merges nothing: the window
			// takes records as they come.
			order: []Order{NoOrder, NoOrder, NoOrder, NoOrder},
		},
	}
	for _, tt := range tests {
		p, err := Build(tt.nodes, tt.cfg)
		if err != nil {
			t.Fatalf("%s: Build: %v", tt.name, err)
		}
		for i, n := range p.Nodes {
			if i < len(tt.par) && n.Parallelism != tt.par[i] {
				t.Errorf("%s: node %d parallelism %d; want %d", tt.name, n.ID, n.Parallelism, tt.par[i])
			}
		}
		for i, e := range p.Edges {
			if i < len(tt.ex) && e.Exchange != tt.ex[i] {
				t.Errorf("%s: edge %d exchange %v; want %v", tt.name, i, e.Exchange, tt.ex[i])
			}
			if i < len(tt.fused) && e.Fused != tt.fused[i] {
				t.Errorf("%s: edge %d fused=%v; want %v", tt.name, i, e.Fused, tt.fused[i])
			}
		}
		if len(p.Regions) != tt.regions {
			t.Errorf("%s: %d regions; want %d\n%s", tt.name, len(p.Regions), tt.regions, p.Explain())
		}
		for i, o := range tt.order {
			if i < len(p.Regions) && p.Regions[i].Order != o {
				t.Errorf("%s: region %d order %v; want %v\n%s", tt.name, i, p.Regions[i].Order, o, p.Explain())
			}
		}
	}
}

func TestBuildRejects(t *testing.T) {
	bad := []struct {
		cfg   Config
		nodes []Node
		want  string
	}{
		{Config{}, []Node{withPar(src(0), -1)}, "parallelism -1"},
		{Config{}, []Node{op(0, 0, Stateless, ExactlyOne)}, "unknown or later node"},
		{Config{}, []Node{{ID: 0, Name: "map", Kind: Op, State: Stateless}}, "no input"},
		{Config{Workers: 2}, []Node{src(0), withPar(op(1, 0, Unkeyed, AnyNumber), 2)}, "keeps unkeyed state"},
		{Config{Ordered: true}, []Node{withPar(src(0), 2)}, "ordered job reads each source in one instance"},
	}
	for i, c := range bad {
		_, err := Build(c.nodes, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: Build error %v; want one containing %q", i, err, c.want)
		}
	}
}

// An operator with unkeyed state is never replicated, whatever the
// workers, ordering or neighbours.
func TestUnkeyedNeverReplicated(t *testing.T) {
	for _, ord := range []bool{false, true} {
		for w := 1; w <= 8; w++ {
			nodes := []Node{src(0), op(1, 0, Stateless, AtMostOne), op(2, 1, Unkeyed, AnyNumber),
				keyed(3, 2, "k"), op(4, 3, Unkeyed, ExactlyOne), sink(5, 4)}
			p, err := Build(nodes, Config{Workers: w, KeyGroups: 128, Ordered: ord})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range p.Nodes {
				if n.State == Unkeyed && n.Kind == Op && n.Parallelism != 1 {
					t.Errorf("workers %d ordered %v: %s runs in %d instances", w, ord, n.Name, n.Parallelism)
				}
			}
		}
	}
}
