package migrate

import (
	"testing"

	"github.com/weirstream/weir/internal/partition"
)

// Spreading over more instances evens the counts out and moves only the
// key groups the new instances need; spreading never moves a key group
// between two instances that are both within their share.
func TestSpread(t *testing.T) {
	for _, c := range []struct{ groups, par, active, on int }{
		{128, 6, 4, 6}, {128, 3, 2, 3}, {7, 4, 1, 4}, {10, 5, 5, 3}, {4096, 8, 4, 8},
	} {
		owner := make([]int, c.groups)
		ct := partition.Contiguous(c.groups, c.active)
		for kg := range owner {
			owner[kg] = ct.Owner(partition.KeyGroup(kg))
		}
		old, err := partition.NewTable(0, c.par, owner)
		if err != nil {
			t.Fatal(err)
		}
		on := func(i int) bool { return i < c.on }
		got, err := Spread(old, on, 5)
		if err != nil {
			t.Fatal(err)
		}
		count := make([]int, c.par)
		moved := 0
		for kg := range c.groups {
			o := got.Owner(partition.KeyGroup(kg))
			count[o]++
			if o != old.Owner(partition.KeyGroup(kg)) {
				moved++
			}
		}
		// The plain computation: every instance on holds its even share,
		// others nothing; what moves is what the instances over their
		// share (or not on) give up.
		want := 0
		for i := range c.par {
			if !on(i) {
				if count[i] != 0 {
					t.Errorf("%+v: instance %d not on holds %d", c, i, count[i])
				}
				continue
			}
			if count[i] < c.groups/c.on || count[i] > (c.groups+c.on-1)/c.on {
				t.Errorf("%+v: instance %d holds %d of %d", c, i, count[i], c.groups)
			}
		}
		oldCount := make([]int, c.par)
		for kg := range c.groups {
			oldCount[old.Owner(partition.KeyGroup(kg))]++
		}
		for i := range c.par {
			if oldCount[i] > count[i] {
				want += oldCount[i] - count[i]
			}
		}
		if moved != want || got.From != 5 {
			t.Errorf("%+v: moved %d key groups, the least that evens them out is %d (from %d)", c, moved, want, got.From)
		}
	}
	if _, err := Spread(partition.Contiguous(4, 2), func(int) bool { return false }, 1); err == nil {
		t.Error("spreading over no instance accepted")
	}
}
