package scalesim

import "testing"

// On small problems the placement heuristic's cost is within 5 % of the
// least possible, on every one solved exactly.
func TestPlacementGaps(t *testing.T) {
	g, err := PlacementGaps(300, 7)
	if err != nil {
		t.Fatal(err)
	}
	if g.Solved < 250 || g.Worst > 0.05 {
		t.Errorf("%+v: want at least 250 solved exactly, none over 5 %%", g)
	}
	t.Logf("%d of %d solved exactly: the heuristic %.2f %% over the least cost on average, %.2f %% at worst", g.Solved, g.Problems, 100*g.Mean, 100*g.Worst)
}

// Where the heaviest key group is at most the mean load, the heuristic
// balances to within 10 % of the mean from contiguous ranges far from it;
// weighing the state moved moves less of it than balancing alone.
func TestRescalePlacement(t *testing.T) {
	for _, c := range []struct {
		n, from, to int
		s           float64
	}{{128, 2, 4, 0.5}, {128, 4, 5, 0.6}, {1024, 8, 6, 0.6}, {1024, 3, 4, 0.6}, {4096, 16, 64, 0.5}, {4096, 64, 32, 0.3}} {
		var most float64
		for _, l := range (Op{KeyGroups: c.n, Skew: c.s}).shares(1) {
			most = max(most, l)
		}
		if most > 1/float64(c.to) {
			t.Fatalf("%+v: the heaviest key group is above the mean; pick a milder skew", c)
		}
		r, err := Rescale(c.n, c.from, c.to, 4, c.s, 1)
		if err != nil {
			t.Fatal(err)
		}
		if r.With.Imbalance > 1.1 || r.With.Moved >= r.Without.Moved {
			t.Errorf("%+v: max/mean %.3f moving %d bytes; without the cost of moving %.3f, %d bytes", c, r.With.Imbalance, r.With.Moved, r.Without.Imbalance, r.Without.Moved)
		}
		t.Logf("%+v: max/mean %.3f from %.3f moving %.0f %% of the state; without its cost %.3f, %.0f %%", c, r.With.Imbalance, r.Before,
			100*float64(r.With.Moved)/float64(r.Bytes), r.Without.Imbalance, 100*float64(r.Without.Moved)/float64(r.Bytes))
	}
}
