package engine

import (
	"github.com/weirstream/weir/internal/coord"
	"github.com/weirstream/weir/internal/migrate"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/runtime"
)

// lifeChange is one instance's join or retirement that a rescale sets.
type lifeChange struct {
	x     *runtime.Retirement
	epoch uint64
	id    coord.TaskID
}

// livesPlan is what a rescale changes of the instances that live by
// their key groups: the joins, set before the tables are added (an
// instance must know its join epoch before its senders end the epoch
// before it), and the retirements, set once they are.
type livesPlan struct {
	joins, retires []lifeChange
}

// planLives plans, for the steps kp of a rescale from epoch from, the
// joins and retirements of the instances that live by their key groups:
// an instance that takes no part joins the epoch before its first key
// group comes, one that owns none after the last step retires after the
// epoch from which it owns none, and one that owns none before or after
// retires from from on.
func (j *Job) planLives(rt *runtime.Runtime, kp []plannedSteps, from uint64) livesPlan {
	var lp livesPlan
	for _, lt := range j.rescale.lives.tasks {
		s := j.Schedule(lt.par)
		tables := []*partition.Table{s.At(from - 1)}
		for _, p := range kp {
			if p.s == s {
				for _, st := range p.steps {
					tables = append(tables, st.Table)
				}
			}
		}
		for inst, l := range migrate.Lives(tables, from-1) {
			x := rt.Retirement(lt.name, inst)
			var id coord.TaskID
			if inst < len(lt.ids) {
				id = lt.ids[inst]
			}
			running := x.Joins() != migrate.Never && x.From() == migrate.Never
			switch {
			case l.Join != migrate.Never && !running:
				lp.joins = append(lp.joins, lifeChange{x, l.Join, id})
			case l.Join == migrate.Never && running:
				l.Retire = from
			}
			if l.Retire != migrate.Never && (running || l.Join != migrate.Never) {
				lp.retires = append(lp.retires, lifeChange{x, l.Retire, id})
			}
		}
	}
	return lp
}

// start sets the joins, and sends the checkpoints the first each joining
// instance reports to; it returns what undoes them, should the tables
// not be added in time, once the process has entered epoch now: each
// instance then retires, owning nothing, from the epoch after its first
// or after now+1, whichever is later (no sender can have ended now+1
// yet), and a rescale waits for its end (livesBusy).
func (lp livesPlan) start(c *coordinator) func(now uint64) {
	for _, ch := range lp.joins {
		ch.x.Join(ch.epoch)
		if c != nil {
			c.joinFrom(ch.id, firstReport(c, ch.epoch))
		}
	}
	return func(now uint64) {
		for _, ch := range lp.joins {
			ch.x.Set(max(ch.epoch+1, now+2))
		}
	}
}

// retire sets the retirements, once the tables are in force.
func (lp livesPlan) retire() {
	for _, ch := range lp.retires {
		ch.x.Set(ch.epoch)
	}
}

// livesStart is what addStarting starts a rescale's instances with: nil
// in a job without instances that live by their key groups.
func (j *Job) livesStart(lp *livesPlan) func() func(uint64) {
	if len(j.rescale.lives.tasks) == 0 {
		return nil
	}
	return func() func(uint64) { return lp.start(j.coord) }
}
