package migrate

import (
	"fmt"

	"github.com/weirstream/weir/internal/partition"
)

// Evict returns the table that takes every key group off the instances
// gone says leave (their process leaves the job, say) and gives each to
// the staying instance that owns the fewest at that point, the lowest
// numbered on a tie; the key groups of staying instances stay put, so a
// plan from old moves only the evicted ones. The result counts old's
// instances and is in force from epoch from. It refuses to evict every
// instance.
func Evict(old *partition.Table, gone func(inst int) bool, from uint64) (*partition.Table, error) {
	n := old.Instances()
	owned := make([]int, n)
	stay := 0
	for i := range n {
		if !gone(i) {
			stay++
		}
	}
	if stay == 0 {
		return nil, fmt.Errorf("migrate: every one of the %d instances would leave; at least one must stay", n)
	}
	owner := make([]int, old.Groups())
	for kg := range owner {
		owner[kg] = old.Owner(partition.KeyGroup(kg))
		owned[owner[kg]]++
	}
	for kg, o := range owner {
		if !gone(o) {
			continue
		}
		best := -1
		for i := range n {
			if !gone(i) && (best < 0 || owned[i] < owned[best]) {
				best = i
			}
		}
		owned[o]--
		owned[best]++
		owner[kg] = best
	}
	return partition.NewTable(from, n, owner)
}
