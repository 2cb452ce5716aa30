package engine

import (
	"github.com/weirstream/weir/internal/partition"
	place "github.com/weirstream/weir/internal/placement"
)

// placedTarget is the table a rescale moves the keyed group of par
// instances to when its key groups' loads are given (Rescale.Loads): the
// placement heuristic's assignment over the target instances, which
// weighs the largest instance load against the key groups it moves (each
// key group's state taken as one unit). Without loads it is contiguous.
// It holds j.rescale.mu.
func (j *Job) placedTarget(r Rescale, targets map[int][]int, contiguous func(int, *partition.Table, uint64) (*partition.Table, error)) func(int, *partition.Table, uint64) (*partition.Table, error) {
	return func(par int, old *partition.Table, from uint64) (*partition.Table, error) {
		loads, ok := r.Loads[par]
		if !ok || len(loads) != old.Groups() {
			return contiguous(par, old, from)
		}
		g := place.Group{Load: loads, Bytes: make([]int64, len(loads)), Current: make([]int, len(loads))}
		for kg := range loads {
			g.Bytes[kg], g.Current[kg] = 1, old.Owner(partition.KeyGroup(kg))
		}
		for _, inst := range targets[par] {
			g.Instances = append(g.Instances, place.Instance{ID: inst, Process: j.rescale.leave.pl.proc(inst, par)})
		}
		a, err := place.Heuristic(place.Problem{Groups: []place.Group{g}, Weights: place.DefaultWeights})
		if err != nil {
			return nil, err
		}
		return partition.NewTable(from, par, a[0])
	}
}
