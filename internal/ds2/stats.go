package ds2

import (
	"fmt"

	"github.com/weirstream/weir/internal/metrics"
)

// Task is a task of a running job as a sizing needs it: its name (as
// metrics names an instance's operator: the chain's), the tasks it reads
// from (indices of tasks before it), whether it is a source or keyed, and
// its instances now and at most (0: no bound).
type Task struct {
	Name          string
	Upstream      []int
	Source, Keyed bool
	Instances     int
	Max           int
}

// FromStats builds a sizing's operators from tasks, in topological order,
// and what every instance did between two snapshots of the whole job
// (prev, then cur). A task's true rates are its instances' records in and
// out over their useful time, summed (records over useful time of all its
// instances, times its instances: under skew an idle instance's few
// records do not stand for its capacity); a keyed task brings the records
// sent to each of its key groups. A source keeps its instances: its
// target is targets[name] when given (a backlog to catch up on, say),
// else the records it read a second over the interval (by the snapshots'
// own clock, ProcessStats.Time), and its measured rates carry the records
// its chain passes on.
func FromStats(tasks []Task, prev, cur metrics.JobStats, targets map[string]float64) ([]Operator, error) {
	d := metrics.DeltaJob(prev, cur)
	byName := map[string]metrics.OperatorStats{}
	for _, o := range d.Operators() {
		byName[o.Operator] = o
	}
	loads := map[string][]int64{}
	before := map[string][]int64{}
	for _, l := range prev.Loads() {
		before[l.Operator] = l.Counts
	}
	for _, l := range cur.Loads() {
		c := append([]int64(nil), l.Counts...)
		for k, n := range before[l.Operator] {
			if k < len(c) {
				c[k] -= n
			}
		}
		loads[l.Operator] = c
	}
	wall := interval(prev, cur)
	ops := make([]Operator, len(tasks))
	for i, t := range tasks {
		o, ok := byName[t.Name]
		if !ok {
			return nil, fmt.Errorf("ds2: task %s has no figures in the snapshots", t.Name)
		}
		op := Operator{Name: t.Name, Upstream: t.Upstream, Instances: t.Instances, Max: t.Max, Source: t.Source, Keep: t.Source}
		if useful := o.Useful.Seconds(); useful > 0 && o.RecordsIn > 0 {
			op.Processing = float64(t.Instances) * float64(o.RecordsIn) / useful
			op.Output = float64(t.Instances) * float64(o.RecordsOut) / useful
		}
		if t.Source {
			target, given := targets[t.Name]
			if !given && wall > 0 {
				target = float64(o.RecordsIn) / wall
			}
			op.Target = target
		}
		if c, ok := loads[t.Name]; ok && t.Keyed {
			op.KeyGroups = make([]float64, len(c))
			for k, n := range c {
				op.KeyGroups[k] = float64(max(n, 0))
			}
		}
		ops[i] = op
	}
	return ops, nil
}

// interval is the seconds between two snapshots: their own process's
// clock (the source instances that read nothing, or started late, do not
// measure it).
func interval(prev, cur metrics.JobStats) float64 {
	if cur.Self < 0 || cur.Self >= len(cur.Processes) || prev.Self != cur.Self || prev.Self >= len(prev.Processes) {
		return 0
	}
	a, b := prev.Processes[prev.Self].Time, cur.Processes[cur.Self].Time
	if a <= 0 || b <= a {
		return 0
	}
	return float64(b-a) / 1e9
}
