package ds2

import (
	"fmt"
	"slices"

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
// else what it read a second over the interval (by the snapshots' own
// clock, ProcessStats.Time) over the time it was not blocked on output,
// and its measured rates carry the records its chain passes on.
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
				target = arrivalRate(prev, d, t.Name, wall)
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

// arrivalRate is the records a second that arrived for a source's
// instances over an interval of wall seconds, when every one of them
// that read anything knows its backlog (metrics.InstanceStats.Backlog):
// what they read plus their backlogs' growth (an instance new in d counts
// its backlog from 0). Otherwise it is readRate's estimate.
func arrivalRate(prev, d metrics.JobStats, name string, wall float64) float64 {
	before := map[[2]int]int64{}
	for _, in := range prev.Instances() {
		if in.Operator == name && in.KnowsBacklog {
			before[[2]int{in.Process, in.Instance}] = in.Backlog
		}
	}
	var n int64
	for _, in := range d.Instances() {
		if in.Operator != name {
			continue
		}
		if !in.KnowsBacklog {
			if in.RecordsIn > 0 {
				return readRate(d, name, wall)
			}
			continue
		}
		n += in.RecordsIn + in.Backlog - before[[2]int{in.Process, in.Instance}]
	}
	return max(float64(n), 0) / wall
}

// readRate is what a source's instances would have read a second over an
// interval of wall seconds had nothing downstream held them back: each
// one's records over the time it was not blocked on output (at least a
// twentieth of the interval). A source held back by a slow operator reads
// less than it is offered; sized on what it read, the operator would grow
// by too little, or not at all.
func readRate(d metrics.JobStats, name string, wall float64) float64 {
	var rate float64
	for _, in := range d.Instances() {
		if in.Operator != name || in.RecordsIn <= 0 {
			continue
		}
		free := max(wall-in.Backpressure.Seconds(), wall/20)
		rate += float64(in.RecordsIn) / free
	}
	return rate
}

// HeldBack says whether a source's instances spent more than a tenth of
// an interval of wall seconds blocked on output: the job does not keep up
// with what it reads, and should not shrink.
func HeldBack(prev, cur metrics.JobStats, sources []string) bool {
	wall := interval(prev, cur)
	if wall <= 0 {
		return false
	}
	d := metrics.DeltaJob(prev, cur)
	for _, in := range d.Instances() {
		if in.RecordsIn > 0 && slices.Contains(sources, in.Operator) && in.Backpressure.Seconds() > wall/10 {
			return true
		}
	}
	return false
}
