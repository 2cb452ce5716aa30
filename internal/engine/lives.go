package engine

import (
	"fmt"

	"github.com/weirstream/weir/internal/coord"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/migrate"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/runtime"
)

// In a job of one process with time-based epochs, the instances of a
// keyed task take part only while they own key groups: an instance runs
// from the epoch before it gains its first key group to the epoch after
// it owns none (migrate.Lives), as a restartable instance of the runtime
// (runtime.AddRestartable). A rescale starts the instances it gives key
// groups to and ends those it takes all of them from; each life is a new
// task, made for its first epoch, which takes its key groups' state from
// the handovers and reports to the checkpoints from its first one on.
// Across processes an instance runs from start to end, as before.

// liveTask is one task whose instances live by their key groups.
type liveTask struct {
	name string // in the runtime
	par  int
	ids  []coord.TaskID // per instance, its reporter (with checkpoints)
}

// livesState is what a rescale needs of the tasks that live by key
// groups.
type livesState struct {
	tasks []liveTask
}

// livesBusy names an instance that retires, or will, whose life has not
// ended yet (it runs, or has joined and not started): a rescale waits for
// it, so that it never joins again before its end has reached the
// checkpoints (coord.Finish, sent before its life ends).
func (j *Job) livesBusy(rt *runtime.Runtime) string {
	for _, lt := range j.rescale.lives.tasks {
		for inst := range lt.ids {
			x := rt.Retirement(lt.name, inst)
			if x.From() != migrate.Never && x.Joins() != migrate.Never && !x.Ended() {
				return fmt.Sprintf("%s#%d", lt.name, inst)
			}
		}
	}
	return ""
}

// mayLive returns the tasks whose instances may live by their key groups:
// in a job of one process, with time-based epochs, whose routing can
// change, the tasks of more than one instance whose every input is keyed
// or comes one to one from another such task (the union after keyed
// operators: its instance i ends with theirs), and which send one to one
// only to such tasks. Whether their state moves by key group is known
// once their first instance is made (movable).
func (w *wiring) mayLive() map[int]bool {
	j := w.j
	if w.pl.procs != 1 || w.net != nil || j.Cfg.EpochRecords > 0 || j.canRescale() != nil {
		return nil
	}
	live := map[int]bool{}
	for ti, t := range w.p.Tasks {
		if t.Parallelism > 1 && j.Nodes[t.Head].Kind != plan.Source {
			live[ti] = true
		}
	}
	return w.keepLiving(live)
}

// keepLiving removes from live, until none is left to remove, the tasks
// with an input other than keyed or one to one from a task of live, and
// those that send one to one to a task not in live.
func (w *wiring) keepLiving(live map[int]bool) map[int]bool {
	for changed := true; changed; {
		changed = false
		for _, e := range w.p.Edges {
			if e.Fused {
				continue
			}
			from, to := w.p.TaskOf[e.From], w.p.TaskOf[e.To]
			fwd := e.Exchange == plan.Forward
			if live[to] && e.Exchange != plan.KeyGroup && !(fwd && live[from]) {
				delete(live, to)
				changed = true
			}
			if live[from] && fwd && !live[to] {
				delete(live, from)
				changed = true
			}
		}
	}
	return live
}

// movable says whether all of a task's state moves by key group: a task
// with state of another kind (per instance, a two-phase output) runs its
// instances from start to end. The routing tables instance 0 saves are
// every life's.
func movable(snaps []dataflow.SnapEntry) bool {
	for _, s := range snaps {
		_, mover := s.S.(dataflow.KeyedMover)
		_, tables := s.S.(routingSnap)
		if !mover && !tables {
			return false
		}
	}
	return true
}

// chooseLives makes the first instance of each task that may live (in
// w.made) and keeps, in w.lives, those whose state moves by key group.
func (w *wiring) chooseLives(live map[int]bool) error {
	w.made = map[int]madeTask{}
	for ti := range w.p.Tasks {
		if !live[ti] {
			continue
		}
		id := w.reporterID()
		it, snaps, err := w.newTask(w.p.Tasks[ti], 0, birth{restore: true, id: id})
		if err != nil {
			return err
		}
		w.made[ti] = madeTask{it: it, id: id}
		if !movable(snaps) {
			delete(live, ti)
		}
	}
	w.lives = w.keepLiving(live)
	return nil
}

// reporterID is a new reporter's id, with checkpoints.
func (w *wiring) reporterID() coord.TaskID {
	if w.j.coord == nil {
		return 0
	}
	return w.j.coord.join()
}

// startLives adds instance inst of task t, one that lives by its key
// groups, to the runtime: absent until the epoch before it first owns a
// key group, and retiring once it owns none for good, by the tables in
// force at the first epoch. made is its first life, if made already.
func (w *wiring) startLives(ti int, t plan.Task, inst int, mt *madeTask) error {
	j, name := w.j, w.runName(t.Head)
	first := j.firstEpoch()
	s := j.Schedule(t.Parallelism)
	l := migrate.Lives(s.Tables(first), first)[inst]
	x := w.rt.Retirement(name, inst)
	var made runtime.InputTask
	var id coord.TaskID
	if mt != nil {
		made, id = mt.it, mt.id
	} else {
		id = w.reporterID()
	}
	present := l.Join != migrate.Never && l.Join <= first
	if !present {
		made = nil
		x.Absent()
		from := uint64(notYet)
		if l.Join != migrate.Never {
			x.Join(l.Join)
			from = firstReport(j.coord, l.Join)
		}
		if j.coord != nil {
			j.coord.joinLater(id, from)
		}
	}
	if l.Retire != migrate.Never {
		x.Set(l.Retire)
	}
	if present && made == nil {
		var err error
		if made, _, err = w.newTask(t, inst, birth{restore: true, id: id}); err != nil {
			return err
		}
	}
	build := func(at uint64) (runtime.InputTask, error) {
		if made != nil {
			it := made // the first life, made before the run
			made = nil
			return it, nil
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		it, _, err := w.newTask(t, inst, birth{first: at, id: id})
		return it, err
	}
	j.noteLives(name, t.Parallelism, id)
	w.rt.AddRestartable(name, inst, w.inboxes[t.Head][inst], build, !w.hasRemote[ti])
	return nil
}

// noteLives records the next instance (they are started in order) of the
// task name of par instances, which lives by its key groups, with its
// reporter id.
func (j *Job) noteLives(name string, par int, id coord.TaskID) {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	l := &j.rescale.lives
	if len(l.tasks) == 0 || l.tasks[len(l.tasks)-1].name != name {
		l.tasks = append(l.tasks, liveTask{name: name, par: par})
	}
	lt := &l.tasks[len(l.tasks)-1]
	lt.ids = append(lt.ids, id)
}

// lastBefore is the last checkpoint (a multiple of every) before epoch
// e: an instance that starts at e reports to none up to it.
func lastBefore(every, e uint64) uint64 {
	if every == 0 || e == 0 {
		return 0
	}
	return (e - 1) / every * every
}

// firstReport is the first checkpoint an instance that starts at epoch e
// reports to: the first multiple of the interval at or after e.
func firstReport(c *coordinator, e uint64) uint64 {
	if c == nil || c.every == 0 {
		return 0
	}
	return (e + c.every - 1) / c.every * c.every
}
