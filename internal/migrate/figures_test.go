package migrate

import (
	"math/rand/v2"
	"testing"

	"github.com/weirstream/weir/internal/partition"
)

// TestFigures logs the step counts of three reconfigurations of 4096 key
// groups (go test -run Figures -v); each is checked against the plain
// count of moves and of the busiest instance's moves.
func TestFigures(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 16))
	owner := make([]int, 4096)
	for kg := range owner {
		owner[kg] = r.IntN(16)
	}
	cases := []struct {
		name     string
		old, new *partition.Table
	}{
		{"2->4 contiguous", partition.Contiguous(4096, 2), partition.Contiguous(4096, 4)},
		{"4->2 contiguous", partition.Contiguous(4096, 4), partition.Contiguous(4096, 2)},
		{"16->16 contiguous to random", partition.Contiguous(4096, 16), table(t, 0, 16, owner)},
	}
	for _, c := range cases {
		delta, moved := degree(c.old, c.new)
		counts := map[Strategy]int{}
		for _, s := range []Strategy{AllAtOnce, Fluid, Batched} {
			steps, err := Plan(c.old, c.new, s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			counts[s] = len(steps)
		}
		capped, err := Plan(c.old, c.new, Batched, Options{MaxPerStep: 2})
		if err != nil {
			t.Fatal(err)
		}
		if counts[AllAtOnce] != 1 || counts[Fluid] != moved || counts[Batched] != delta || len(capped) != max(delta, (moved+1)/2) {
			t.Fatalf("%s: %v, capped %d; %d moves, degree %d", c.name, counts, len(capped), moved, delta)
		}
		pairs, err := Plan(c.old, c.new, Batched, Options{PerPair: 4096})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d moves; all-at-once %d, fluid %d, batched %d (largest step %d), batched with at most 2 per step %d, "+
			"batched with any number per pair %d", c.name, moved, counts[AllAtOnce], counts[Fluid], counts[Batched],
			largest(c.old, c.new), len(capped), len(pairs))
	}
}

func largest(old, new *partition.Table) int {
	steps, _ := Plan(old, new, Batched, Options{})
	n := 0
	for _, s := range steps {
		n = max(n, len(s.Moves))
	}
	return n
}
