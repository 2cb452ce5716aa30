package engine

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/ds2"
	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/runtime"
)

// ScaleDecision is one decision of the autoscaler: at the end of a policy
// interval (Epoch), the keyed operators' instances went From -> To; Hot
// names key groups no parallelism could serve at the sizing's target.
type ScaleDecision struct {
	Epoch    uint64
	From, To int
	Hot      []string
}

// autoscaling is a job's autoscaler and what it decided.
type autoscaling struct {
	mu        sync.Mutex
	decisions []ScaleDecision
	err       error // why it stopped deciding, if it did
}

// ScaleDecisions are the autoscaler's decisions so far, oldest first, and
// why it stopped deciding, if it did.
func (j *Job) ScaleDecisions() ([]ScaleDecision, error) {
	j.autoscale.mu.Lock()
	defer j.autoscale.mu.Unlock()
	return append([]ScaleDecision(nil), j.autoscale.decisions...), j.autoscale.err
}

// autoscaler sizes the keyed operators of a running job of one process
// every policy interval: DS2 over each task's true rates between two
// snapshots of the job's figures, the keyed operators' largest sizing
// applied to all of them (one rescale moves them together), through a
// ds2.Decider.
type autoscaler struct {
	j       *Job
	cfg     dataflow.AutoscaleConfig
	tasks   []ds2.Task
	keyed   []int // indices of the keyed tasks
	planned int   // the most instances a keyed task has
	decider *ds2.Decider
	prev    metrics.JobStats
	last    uint64 // the epoch completed when prev was taken (0: none yet)
	sources []string
	// moving is the last step of the migration last asked for: intervals
	// until it has completed are not measured, and restart says the
	// decider starts again after it. failed counts rescales refused in a
	// row.
	moving  uint64
	restart bool
	failed  int
}

// startAutoscale starts a, the job's autoscaler, if it has one; it
// refuses a job with keyed state of its own, which cannot move.
func (j *Job) startAutoscale(rt *runtime.Runtime, a *autoscaler) error {
	if a == nil {
		return nil
	}
	if len(j.rescale.unmovable) > 0 {
		return fmt.Errorf("weir: Autoscale: %s keeps keyed state of its own (declared with KeyedState), which cannot move with its key groups", strings.Join(j.rescale.unmovable, ", "))
	}
	rt.AddService("autoscale", func(done <-chan struct{}) error {
		// Intervals by the clock: epochs complete in bursts behind a
		// slow operator, and their figures would measure the bursts.
		t := time.NewTicker(time.Duration(a.cfg.Every) * j.Cfg.Interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return nil
			case <-t.C:
				select {
				case <-done:
					return nil // a tick left from before the end
				default:
				}
				if err := a.poll(); err != nil {
					j.autoscale.mu.Lock()
					j.autoscale.err = err
					j.autoscale.mu.Unlock()
					j.Logger().Warn("weir: the autoscaler stops deciding", "reason", err)
					return nil
				}
			}
		}
	})
	return nil
}

// newAutoscaler reads the tasks of a job that autoscales (nil for one
// that does not); a job without keyed operators cannot.
func (j *Job) newAutoscaler() (*autoscaler, error) {
	if j.Cfg.Autoscale == nil {
		return nil, nil
	}
	cfg := *j.Cfg.Autoscale
	if err := j.canRescale(); err != nil {
		return nil, fmt.Errorf("weir: Autoscale: %w", err)
	}
	topo, err := j.Topology()
	if err != nil {
		return nil, err
	}
	a := &autoscaler{j: j, cfg: cfg}
	for i, t := range topo.Tasks {
		a.tasks = append(a.tasks, ds2.Task{Name: t.Name, Source: t.Kind == "source", Keyed: t.Keyed, Instances: t.Parallelism, Max: t.Parallelism})
		if t.Keyed {
			a.keyed = append(a.keyed, i)
			a.planned = max(a.planned, t.Parallelism)
		}
		if t.Kind == "source" {
			a.sources = append(a.sources, t.Name)
		}
	}
	for _, e := range topo.Edges {
		a.tasks[e.To].Upstream = append(a.tasks[e.To].Upstream, e.From)
	}
	if len(a.keyed) == 0 {
		return nil, errors.New("weir: Autoscale: the job has no keyed operator of more than one instance to size")
	}
	active := a.planned
	if j.Cfg.Active > 0 {
		active = min(active, j.Cfg.Active)
	}
	if a.decider, err = ds2.NewDecider(cfg.Policy, []int{active}); err != nil {
		return nil, err
	}
	return a, nil
}

// poll takes a snapshot of the job's figures and decides on the
// interval since the last one. The intervals of a migration under way are
// not measured: the decider starts again (its warm-up first) once the
// migration's last step has completed.
func (a *autoscaler) poll() error {
	cur := a.j.Stats()
	prev, had := a.prev, a.last > 0
	a.prev, a.last = cur, max(1, a.j.CompletedEpoch())
	if a.last <= a.moving {
		a.restart = true
		return nil
	}
	if a.restart {
		a.restart = false
		var err error
		a.decider, err = ds2.NewDecider(a.cfg.Policy, []int{a.active()})
		return err
	}
	if !had {
		return nil
	}
	return a.decide(a.last, prev, cur)
}

// decide sizes the tasks over the interval from prev to cur and, if the
// decider acts, rescales the keyed operators. An interval that cannot be
// sized is passed over; so is a rescale refused for being busy. Three
// rescales in a row refused for anything else stop the autoscaler.
func (a *autoscaler) decide(end uint64, prev, cur metrics.JobStats) error {
	active := a.active()
	for _, k := range a.keyed {
		a.tasks[k].Instances = min(active, a.tasks[k].Max)
	}
	ops, err := ds2.FromStats(a.tasks, prev, cur, nil)
	if err != nil {
		a.j.Logger().Debug("weir: autoscale: an interval not sized", "reason", err)
		return nil
	}
	b, err := a.cfg.Policy.Size(ops)
	if err != nil {
		a.j.Logger().Debug("weir: autoscale: an interval not sized", "reason", err)
		return nil
	}
	group := ds2.Band{Sizing: ds2.Sizing{Parallelism: []int{0}, Max: []int{a.planned}, Measured: []bool{false}}, Up: []int{0}, Down: []int{0}}
	for _, k := range a.keyed {
		group.Parallelism[0] = max(group.Parallelism[0], b.Parallelism[k])
		group.Up[0], group.Down[0] = max(group.Up[0], b.Up[k]), max(group.Down[0], b.Down[k])
		group.Measured[0] = group.Measured[0] || b.Measured[k]
	}
	if got := a.decider.Current()[0]; got != active {
		// A rescale from elsewhere (Job.Rescale) changed the instances.
		if a.decider, err = ds2.NewDecider(a.cfg.Policy, []int{active}); err != nil {
			return err
		}
	}
	next, changed := a.decider.Step(group, ds2.HeldBack(prev, cur, a.sources))
	if !changed {
		return nil
	}
	m, err := a.j.Rescale(Rescale{Instances: next[0], Strategy: a.cfg.Strategy, Gap: a.cfg.Gap, PerPair: a.cfg.PerPair, MaxPerStep: a.cfg.MaxPerStep})
	if err != nil {
		// Decide again once it can be carried out.
		d, err2 := ds2.NewDecider(a.cfg.Policy, []int{active})
		if err2 != nil {
			return err2
		}
		a.decider = d
		if errors.Is(err, errBusy) || errors.Is(err, routing.ErrTooLate) {
			return nil
		}
		if a.failed++; a.failed < 3 {
			a.j.Logger().Warn("weir: autoscale: a rescale refused", "to", next[0], "reason", err)
			return nil
		}
		return fmt.Errorf("rescale to %d instances: %w", next[0], err)
	}
	a.failed, a.moving = 0, m.Last
	d := ScaleDecision{Epoch: end, From: active, To: next[0]}
	for _, h := range b.Hot {
		d.Hot = append(d.Hot, fmt.Sprintf("key group %d of %s needs %.0f records/s; an instance serves %.0f", h.KeyGroup, a.tasks[h.Operator].Name, h.Need, h.Capacity))
	}
	a.j.autoscale.mu.Lock()
	a.j.autoscale.decisions = append(a.j.autoscale.decisions, d)
	a.j.autoscale.mu.Unlock()
	a.j.Logger().Info("weir: autoscale", "epoch", end, "from", active, "to", next[0])
	return nil
}

// active is how many instances own key groups in the newest table of the
// keyed operators of the most instances.
func (a *autoscaler) active() int {
	s := a.j.Schedule(a.planned)
	t := s.Last()
	owners := map[int]bool{}
	for kg := range t.Groups() {
		owners[t.Owner(partition.KeyGroup(kg))] = true
	}
	return len(owners)
}
