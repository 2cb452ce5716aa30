package engine

import (
	"testing"

	"github.com/weirstream/weir/internal/partition"
)

// A rescale given its key groups' loads places them by load: 16 key
// groups, four of them carrying most records, go from 2 instances to 4
// with the largest instance load near the mean, where contiguous ranges
// would give one instance all four heavy ones; without loads (or loads
// of another length) the table is contiguous.
func TestPlacedTarget(t *testing.T) {
	j := &Job{}
	old := partition.Contiguous(16, 2)
	loads := make([]float64, 16)
	for kg := range loads {
		loads[kg] = 1
		if kg < 4 {
			loads[kg] = 10
		}
	}
	targets := map[int][]int{4: {0, 1, 2, 3}}
	contiguous := func(par int, _ *partition.Table, from uint64) (*partition.Table, error) {
		t := partition.Contiguous(16, 4)
		owner := make([]int, 16)
		for kg := range owner {
			owner[kg] = t.Owner(partition.KeyGroup(kg))
		}
		return partition.NewTable(from, par, owner)
	}
	most := func(tb *partition.Table) float64 {
		per := map[int]float64{}
		m := 0.0
		for kg, l := range loads {
			per[tb.Owner(partition.KeyGroup(kg))] += l
			m = max(m, per[tb.Owner(partition.KeyGroup(kg))])
		}
		return m
	}
	placed, err := j.placedTarget(Rescale{Loads: map[int][]float64{4: loads}}, targets, contiguous)(4, old, 7)
	if err != nil {
		t.Fatal(err)
	}
	flat, _ := j.placedTarget(Rescale{Loads: map[int][]float64{4: loads[:8]}}, targets, contiguous)(4, old, 7)
	mean := 52.0 / 4
	if got := most(placed); got > 1.1*mean || placed.From != 7 {
		t.Errorf("placed by load: most loaded instance %v, mean %v; want within 10 %%", got, mean)
	}
	if got := most(flat); got != 40 {
		t.Errorf("loads of another length: most loaded %v; want the contiguous table's 40", got)
	}
}
