package migrate

import (
	"fmt"
	"slices"

	"github.com/weirstream/weir/internal/partition"
)

// Spread returns the table that spreads old's key groups evenly over the
// instances on says take part (a process joined the job, say): each gets
// ⌊G/k⌋ or ⌈G/k⌉ of the G key groups, the larger shares going to those
// that own most already. An instance keeps as many of its key groups as
// its share allows, lowest first; the others, and those of instances not
// on, go to the instances short of their share, in instance order. So a
// plan from old moves only what evening out needs. The result counts
// old's instances and is in force from epoch from.
func Spread(old *partition.Table, on func(inst int) bool, from uint64) (*partition.Table, error) {
	n, groups := old.Instances(), old.Groups()
	owned := make([]int, n)
	for kg := range groups {
		owned[old.Owner(partition.KeyGroup(kg))]++
	}
	var takers []int
	for i := range n {
		if on(i) {
			takers = append(takers, i)
		}
	}
	if len(takers) == 0 {
		return nil, fmt.Errorf("migrate: none of the %d instances takes part", n)
	}
	// The larger shares go to the instances that own most.
	byOwned := slices.Clone(takers)
	slices.SortStableFunc(byOwned, func(a, b int) int { return owned[b] - owned[a] })
	quota := make([]int, n)
	for r, i := range byOwned {
		quota[i] = groups / len(takers)
		if r < groups%len(takers) {
			quota[i]++
		}
	}
	owner := make([]int, groups)
	kept := make([]int, n)
	var loose []int
	for kg := range owner {
		o := old.Owner(partition.KeyGroup(kg))
		if on(o) && kept[o] < quota[o] {
			owner[kg] = o
			kept[o]++
			continue
		}
		loose = append(loose, kg)
	}
	next := 0
	for _, kg := range loose {
		for kept[takers[next]] >= quota[takers[next]] {
			next++
		}
		owner[kg] = takers[next]
		kept[takers[next]]++
	}
	return partition.NewTable(from, n, owner)
}
