package plan

import "testing"

func TestBuildFusion(t *testing.T) {
	tests := []struct {
		name      string
		nodes     []Node
		wantTasks int
		wantEx    []Exchange
		wantFused []bool
	}{
		{
			name: "map chain fuses into source",
			nodes: []Node{
				{ID: 0, Name: "src", Kind: Source, Parallelism: 4},
				{ID: 1, Name: "map", Kind: Stateless, Parallelism: 4, Inputs: []Input{{From: 0}}},
				{ID: 2, Name: "filter", Kind: Stateless, Parallelism: 4, Inputs: []Input{{From: 1}}},
			},
			wantTasks: 1,
			wantEx:    []Exchange{Forward, Forward},
			wantFused: []bool{true, true},
		},
		{
			name: "keyed window breaks the chain, sink gathers",
			nodes: []Node{
				{ID: 0, Name: "src", Kind: Source, Parallelism: 2},
				{ID: 1, Name: "window", Kind: Stateful, Parallelism: 2, Inputs: []Input{{From: 0, Keyed: true}}},
				{ID: 2, Name: "sink", Kind: Sink, Parallelism: 1, Inputs: []Input{{From: 1}}},
			},
			wantTasks: 3,
			wantEx:    []Exchange{KeyGroup, Gather},
			wantFused: []bool{false, false},
		},
		{
			name: "parallelism change rebalances",
			nodes: []Node{
				{ID: 0, Name: "src", Kind: Source, Parallelism: 2},
				{ID: 1, Name: "map", Kind: Stateless, Parallelism: 3, Inputs: []Input{{From: 0}}},
			},
			wantTasks: 2,
			wantEx:    []Exchange{Rebalance},
			wantFused: []bool{false},
		},
		{
			name: "union is a task of its own",
			nodes: []Node{
				{ID: 0, Name: "a", Kind: Source, Parallelism: 2},
				{ID: 1, Name: "b", Kind: Source, Parallelism: 2},
				{ID: 2, Name: "union", Kind: Stateful, Parallelism: 2, Inputs: []Input{{From: 0}, {From: 1}}},
			},
			wantTasks: 3,
			wantEx:    []Exchange{Forward, Forward},
			wantFused: []bool{false, false},
		},
	}
	for _, tt := range tests {
		p, err := Build(tt.nodes)
		if err != nil {
			t.Fatalf("%s: Build: %v", tt.name, err)
		}
		if len(p.Tasks) != tt.wantTasks {
			t.Errorf("%s: %d tasks; want %d\n%s", tt.name, len(p.Tasks), tt.wantTasks, p.Explain())
		}
		for i, e := range p.Edges {
			if e.Exchange != tt.wantEx[i] || e.Fused != tt.wantFused[i] {
				t.Errorf("%s: edge %d = %v fused=%v; want %v fused=%v", tt.name, i, e.Exchange, e.Fused, tt.wantEx[i], tt.wantFused[i])
			}
		}
	}
}

func TestBuildRejects(t *testing.T) {
	bad := [][]Node{
		{{ID: 0, Name: "src", Kind: Source, Parallelism: 0}},
		{{ID: 0, Name: "map", Kind: Stateless, Parallelism: 1}},
		{{ID: 1, Name: "map", Kind: Stateless, Parallelism: 1, Inputs: []Input{{From: 5}}}},
	}
	for i, nodes := range bad {
		if _, err := Build(nodes); err == nil {
			t.Errorf("case %d: Build accepted an invalid graph", i)
		}
	}
}
