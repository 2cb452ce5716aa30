package migrate

import (
	"math/rand/v2"
	"testing"

	"github.com/weirstream/weir/internal/partition"
)

// TestEvict checks, over random tables, that evicting a set of instances
// moves exactly their key groups, onto staying instances, and leaves the
// staying instances' loads within one of each other's when they started
// balanced.
func TestEvict(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 2 + r.IntN(9)
		groups := n + r.IntN(200)
		old := partition.Contiguous(groups, n)
		goneSet := map[int]bool{}
		for len(goneSet) == 0 || len(goneSet) == n {
			clear(goneSet)
			for i := range n {
				if r.IntN(3) == 0 {
					goneSet[i] = true
				}
			}
		}
		gone := func(i int) bool { return goneSet[i] }
		next, err := Evict(old, gone, 7)
		if err != nil {
			t.Fatal(err)
		}
		if next.From != 7 || next.Instances() != n || next.Groups() != groups {
			t.Fatalf("trial %d: table from %d of %d instances, %d groups", trial, next.From, next.Instances(), next.Groups())
		}
		load := make([]int, n)
		for kg := range groups {
			g := partition.KeyGroup(kg)
			was, is := old.Owner(g), next.Owner(g)
			switch {
			case gone(is):
				t.Fatalf("trial %d: key group %d stays on leaving instance %d", trial, kg, is)
			case !gone(was) && was != is:
				t.Fatalf("trial %d: key group %d of staying instance %d moved to %d", trial, kg, was, is)
			}
			load[is]++
		}
		lo, hi := groups, 0
		for i := range n {
			if !gone(i) {
				lo, hi = min(lo, load[i]), max(hi, load[i])
			}
		}
		if hi-lo > 1 {
			t.Fatalf("trial %d: staying loads range %d..%d over %v", trial, lo, hi, load)
		}
	}
	if _, err := Evict(partition.Contiguous(8, 2), func(int) bool { return true }, 1); err == nil {
		t.Fatal("evicting every instance was not refused")
	}
}
