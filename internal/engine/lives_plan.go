package engine

import (
	"fmt"

	"github.com/weirstream/weir/internal/coord"
	"github.com/weirstream/weir/internal/migrate"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/runtime"
)

// lifeChange is one instance's join or retirement that a rescale sets;
// local says whether the instance runs in this process (its reporter id
// is then id).
type lifeChange struct {
	x     *runtime.Retirement
	epoch uint64
	id    coord.TaskID
	local bool
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
		lp.plan(rt, lt, tables, from)
	}
	return lp
}

// plan adds the joins and retirements of the instances of lt that the
// tables, from the one in force before epoch from, give.
func (lp *livesPlan) plan(rt *runtime.Runtime, lt liveTask, tables []*partition.Table, from uint64) {
	for inst, l := range migrate.Lives(tables, from-1) {
		x := rt.Retirement(lt.name, inst)
		ch := lifeChange{x: x, id: lt.ids[inst], local: lt.local[inst]}
		running := x.Joins() != migrate.Never && x.From() == migrate.Never
		switch {
		case l.Join != migrate.Never && !running:
			ch.epoch = l.Join
			lp.joins = append(lp.joins, ch)
		case l.Join == migrate.Never && running:
			l.Retire = from
		}
		if l.Retire != migrate.Never && (running || l.Join != migrate.Never) {
			ch.epoch = l.Retire
			lp.retires = append(lp.retires, ch)
		}
	}
}

// join sets the joins. It is called with the locks of the schedules
// held, once their tables are found in time (routing.AddAllJoining): no
// sender can end the epoch before a join meanwhile, and none is undone.
func (lp livesPlan) join() {
	for _, ch := range lp.joins {
		ch.x.Join(ch.epoch)
	}
}

// announce sends the checkpoint the first each joining local instance
// reports to, before the joins are set: no part from it on is written
// without the instance.
func (lp livesPlan) announce(c *coordinator) {
	if c == nil {
		return
	}
	for _, ch := range lp.joins {
		if ch.local {
			c.joinFrom(ch.id, firstReport(c, ch.epoch))
		}
	}
}

// withdraw takes back what announce sent, the joins not set.
func (lp livesPlan) withdraw(c *coordinator) {
	if c == nil {
		return
	}
	for _, ch := range lp.joins {
		if ch.local {
			c.send(coord.Withdraw{Task: ch.id})
		}
	}
}

// missedRemote fails joins set too late for a peer's markers: a marker of
// the epoch a local instance joins at, or of a later one, came from a
// sender in another process before the join was set, and the outlet may
// have dropped it (runtime.MarkRemote), so the instance could take that
// sender's records of the next epoch before its key groups' state. This
// process is behind its peers by half the lead or more (its clock, with
// time-based epochs). It is checked once the joins are set.
func (lp livesPlan) missedRemote(rt *runtime.Runtime) error {
	got := rt.RemoteMarked()
	for _, ch := range lp.joins {
		if ch.local && got >= ch.epoch {
			return fmt.Errorf("weir: rescale: an instance joins at epoch %d, and a marker of epoch %d from another process came before the join was set: this process is behind its peers (are the machines' clocks apart?)", ch.epoch, got)
		}
	}
	return nil
}

// retire sets the retirements, once the tables are in force.
func (lp livesPlan) retire() {
	for _, ch := range lp.retires {
		ch.x.Set(ch.epoch)
	}
}

// livesJoin is what addStarting sets a rescale's joins with, those of
// the plan *lp holds then: nil in a job without instances that live by
// their key groups.
func (j *Job) livesJoin(lp *livesPlan) joiner {
	if len(j.rescale.lives.tasks) == 0 {
		return nil
	}
	return livesJoiner{lp, j.coord}
}

// livesJoiner sets the joins of the plan lp points to.
type livesJoiner struct {
	lp *livesPlan
	c  *coordinator
}

func (l livesJoiner) announce() { l.lp.announce(l.c) }
func (l livesJoiner) join()     { l.lp.join() }
func (l livesJoiner) withdraw() { l.lp.withdraw(l.c) }

// applyKeyed puts in force the steps of one keyed group that a peer
// announced, with the lives they give the instances that live by their
// key groups, here as in the process that planned them: the joins before
// the tables (an instance must know its join epoch before its senders
// end the epoch before it), the retirements once they are in force.
func (j *Job) applyKeyed(rcs []migrate.Reconfig) error {
	par, s, err := j.keyedGroup(rcs[0].Operator)
	if err != nil {
		return err
	}
	var tables []*partition.Table
	for _, rc := range rcs {
		if rc.Operator != rcs[0].Operator {
			return fmt.Errorf("routing groups %q and %q in one announcement", rcs[0].Operator, rc.Operator)
		}
		if t := s.At(rc.Table.From); !j.beforeBoot(rc.Table) && !(t.From == rc.Table.From && t.Equal(rc.Table)) {
			tables = append(tables, rc.Table)
		}
	}
	if len(tables) == 0 {
		return nil // in force already
	}
	j.mu.Lock()
	rt := j.rt
	j.mu.Unlock()
	from := tables[0].From
	var lp livesPlan
	j.rescale.mu.Lock()
	for _, lt := range j.rescale.lives.tasks {
		if lt.par == par && rt != nil {
			lp.plan(rt, lt, append([]*partition.Table{s.At(from - 1)}, tables...), from)
		}
	}
	j.rescale.mu.Unlock()
	if len(lp.joins) > 0 {
		defer j.settingJoins()() // until it is over (idle_parts.go)
		if now := j.enteredNow(rt, 0); from-1 <= now {
			return fmt.Errorf("%w: instances join at epoch %d, and epoch %d was entered", routing.ErrTooLate, from-1, now)
		}
		if err := lp.lagging(); err != nil {
			return err
		}
		lp.announce(j.coord)
		if err := tooLate(routing.AddAllJoining([]routing.Addition{{S: s, Tables: tables}}, lp.join)); err != nil {
			lp.withdraw(j.coord)
			return err
		}
		if err := lp.missedRemote(rt); err != nil {
			return err
		}
	} else {
		for _, t := range tables {
			if err := tooLate(s.Add(t)); err != nil {
				return err
			}
		}
	}
	lp.retire()
	return nil
}

// lagging refuses the joins of local instances whose last life has not
// ended, at a retirement before the join: the process lags so far behind
// the one that planned them (which waits for its own, livesBusy) that
// the instance would miss the epochs between.
func (lp livesPlan) lagging() error {
	for _, ch := range lp.joins {
		x := ch.x
		if ch.local && x.Joins() != migrate.Never && !x.Ended() && x.From() < ch.epoch {
			return fmt.Errorf("an instance retiring at epoch %d, whose life has not ended yet, joins again at epoch %d: this process lags too far behind its peers", x.From(), ch.epoch)
		}
	}
	return nil
}
