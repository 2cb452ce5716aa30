package engine

import (
	"fmt"
	"slices"

	"github.com/weirstream/weir/internal/coord"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/migrate"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/runtime"
)

// In a job whose processes stay (not elastic), of one process or, with
// time-based epochs, of several, the instances of a keyed task take part only while they own key groups: an instance runs
// from the epoch before it gains its first key group to the epoch after
// it owns none (migrate.Lives), as a restartable instance of the runtime
// (runtime.AddRestartable). A rescale starts the instances it gives key
// groups to and ends those it takes all of them from; each life is a new
// task, made for its first epoch, which takes its key groups' state from
// the handovers and reports to the checkpoints from its first one on.
// Every process derives every instance's lives from the same tables (its
// own, or those a peer announced, applyKeyed), and sets them on its
// retirements: a local instance's, which its runtime starts and ends, and
// a remote one's, which its outlets and inboxes follow. A process whose
// instances all wait still writes its checkpoint parts (idle_parts.go).
// Elsewhere (an elastic job, count-based epochs across processes, a task
// of fewer instances than processes, a job partitioned by pkg or prompt,
// whose window instances meet in every epoch's round) an instance runs
// from start to end.
// A join must be known before any sender ends the epoch before it: in one
// process the schedule's lock makes sure (routing.AddAllJoining), and
// across processes the clock bounds the senders of every process (none
// ends an epoch before the clock has passed it), which count-based epochs
// do not: a sender in the planning process may end the join's epoch
// before a hearing process, whose own senders lag, sets the join.

// liveTask is one task whose instances live by their key groups.
type liveTask struct {
	name string // in the runtime
	par  int
	// per instance: whether it runs in this process, and its reporter
	// (with checkpoints)
	local []bool
	ids   []coord.TaskID
}

// livesState is what a rescale needs of the tasks that live by key
// groups.
type livesState struct {
	tasks []liveTask
	// hold, in a job of several processes, keeps the runtime from ending
	// while a local instance may still be joined (releaseLives); ending
	// says this process refuses rescales and leaves (the job's input has
	// ended), and peersEnding which peers said so (or ended).
	hold        func()
	ending      bool
	peersEnding map[int]bool
}

// livesBusy names an instance that retires, or will, whose life has not
// ended yet (it runs, or has joined and not started): a rescale waits for
// it, so that it never joins again before its end has reached the
// checkpoints (coord.Finish, sent before its life ends).
func (j *Job) livesBusy(rt *runtime.Runtime) string {
	for _, lt := range j.rescale.lives.tasks {
		for inst := range lt.ids {
			if !lt.local[inst] {
				continue // its own process knows when its life ends
			}
			x := rt.Retirement(lt.name, inst)
			if x.From() != migrate.Never && x.Joins() != migrate.Never && !x.Ended() {
				return fmt.Sprintf("%s#%d", lt.name, inst)
			}
		}
	}
	return ""
}

// mayLive returns the tasks whose instances may live by their key groups:
// in a job whose processes stay, of one process or with time-based
// epochs, whose routing can change, the tasks of at least two instances and one in each
// process (each process makes one to learn whether their state moves,
// chooseLives) whose every input is keyed
// or comes one to one from another such task (the union after keyed
// operators: its instance i ends with theirs), and which send one to one
// only to such tasks. Whether their state moves by key group is known
// once their first instance is made (movable).
func (w *wiring) mayLive() map[int]bool {
	j := w.j
	if j.slots != nil || j.Cfg.EpochRecords > 0 && w.pl.procs > 1 || j.canRescale() != nil || j.microBatched() {
		return nil
	}
	live := map[int]bool{}
	for ti, t := range w.p.Tasks {
		if t.Parallelism > 1 && t.Parallelism >= w.pl.procs && j.Nodes[t.Head].Kind != plan.Source {
			live[ti] = true
		}
	}
	return w.keepLiving(live)
}

// microBatched says whether the job's window aggregations may run
// Prompt's or PKG's rounds, whose receivers meet at every epoch's end:
// they all take part from start to end, and the rounds give work to those
// the routing gives key groups to.
func (j *Job) microBatched() bool {
	p := j.Cfg.Partitioning
	return p == partition.PKG.String() || p == partition.Prompt.String()
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

// chooseLives makes the first local instance of each task that may live
// (in w.made) and keeps, in w.lives, those whose state moves by key
// group: every process decides alike, from the same operators.
func (w *wiring) chooseLives(live map[int]bool) error {
	w.made = map[int]madeTask{}
	for ti, t := range w.p.Tasks {
		if !live[ti] {
			continue
		}
		inst := 0
		for !w.pl.local(inst, t.Parallelism) {
			inst++
		}
		id := w.reporterID()
		it, snaps, err := w.newTask(t, inst, birth{restore: true, id: id})
		if err != nil {
			return err
		}
		w.made[ti] = madeTask{it: it, id: id, inst: inst, handover: slices.ContainsFunc(snaps, func(s dataflow.SnapEntry) bool {
			_, ok := s.S.(dataflow.KeyedMover)
			return ok
		})}
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
		if made != nil && mt.handover {
			// Its handover, made with it, counted it as live.
			j.handovers.live.Add(-1)
		}
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
	j.noteLives(name, t.Parallelism, inst, id, true)
	w.rt.AddRestartable(name, inst, w.inboxes[t.Head][inst], build, !w.hasRemote[ti])
	return nil
}

// remoteLives sets the retirements of the instances of the tasks that
// live by their key groups that run in other processes, as startLives
// does for the local ones: their outlets and inboxes here follow them.
func (w *wiring) remoteLives() {
	j, first := w.j, w.j.firstEpoch()
	for ti, t := range w.p.Tasks {
		if !w.lives[ti] {
			continue
		}
		name := w.runName(t.Head)
		lives := migrate.Lives(j.Schedule(t.Parallelism).Tables(first), first)
		for inst, l := range lives {
			if w.pl.local(inst, t.Parallelism) {
				continue
			}
			x := w.rt.Retirement(name, inst)
			if l.Join == migrate.Never || l.Join > first {
				x.Absent()
				if l.Join != migrate.Never {
					x.Join(l.Join)
				}
			}
			if l.Retire != migrate.Never {
				x.Set(l.Retire)
			}
			j.noteLives(name, t.Parallelism, inst, 0, false)
		}
	}
}

// noteLives records instance inst of the task name of par instances,
// which lives by its key groups: whether it runs here, with its reporter
// id.
func (j *Job) noteLives(name string, par, inst int, id coord.TaskID, local bool) {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	l := &j.rescale.lives
	k := slices.IndexFunc(l.tasks, func(lt liveTask) bool { return lt.name == name })
	if k < 0 {
		k = len(l.tasks)
		l.tasks = append(l.tasks, liveTask{name: name, par: par, local: make([]bool, par), ids: make([]coord.TaskID, par)})
	}
	l.tasks[k].local[inst], l.tasks[k].ids[inst] = local, id
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

// holdLives keeps the runtime of a process of a job of several from
// ending while its instances that live by their key groups all wait: a
// peer may still announce a rescale that joins them.
func (w *wiring) holdLives() {
	if len(w.lives) == 0 || w.pl.procs < 2 {
		return
	}
	w.j.rescale.mu.Lock()
	defer w.j.rescale.mu.Unlock()
	w.j.rescale.lives.hold = w.rt.Hold()
	// Nor do its handovers close (handovers.ended) while its instances
	// all wait: they may take key groups again.
	w.j.handovers.live.Add(1)
	w.j.handovers.held.Store(1)
}

// releaseLives lets the runtime (and the handovers) end once no local
// instance that lives by its key groups will take part again: this
// process leaves (its instances retire), or it and every peer that stays
// have said the job is ending (markEnding: each refuses rescales and
// leaves from then on, and announced every one it accepted before), and
// every local instance's last life has ended; or, at ended, the runtime
// has ended (every local instance's life ended with the input, none
// waiting to take part again).
func (j *Job) releaseLives(ended bool) {
	j.mu.Lock()
	rt, h := j.rt, j.handovers
	j.mu.Unlock()
	j.rescale.mu.Lock()
	l := &j.rescale.lives
	release := l.hold
	ok := release != nil && rt != nil && (ended || j.rescale.leave.from[j.Process()] > 0 || l.ending && j.peersEnded() && !j.livesPending(rt))
	if ok {
		l.hold = nil
	}
	j.rescale.mu.Unlock()
	if !ok {
		return
	}
	// The handovers first: a close to the peers goes only while the
	// runtime runs, and the release may end it.
	h.held.Store(0)
	if err := h.ended(); err != nil {
		j.failRun(err)
	}
	release()
}

// peersEnded says whether every peer that stays has said the job is
// ending, or ended. It holds j.rescale.mu.
func (j *Job) peersEnded() bool {
	for q := range j.Processes() {
		if q != j.Process() && j.rescale.leave.from[q] == 0 && !j.rescale.lives.peersEnding[q] {
			return false
		}
	}
	return true
}

// markEnding says whether this process takes the job as ending, in a job
// of several processes whose instances live by their key groups: once
// notEnding refuses, it refuses every later rescale and leave
// (refuseEnding). Its summaries say so (summary.Message.Ending), with
// the announcements read after it.
func (j *Job) markEnding() bool {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	l := &j.rescale.lives
	if len(l.tasks) > 0 && j.Processes() > 1 && !l.ending && j.notEnding("") != nil {
		l.ending = true
	}
	return l.ending
}

// refuseEnding refuses a rescale or a leave (what) of a job of several
// processes whose instances live by their key groups once the job is
// ending: a process whose instances all wait may have ended since
// (releaseLives). It holds j.rescale.mu.
func (j *Job) refuseEnding(what string) error {
	l := &j.rescale.lives
	if len(l.tasks) == 0 || j.Processes() < 2 {
		return nil
	}
	err := j.notEnding(what)
	if err == nil && l.ending {
		err = fmt.Errorf("weir: %s: the job is ending: its sources have all read their input", what)
	}
	if err != nil {
		l.ending = true
	}
	return err
}

// peerEnding notes a peer's summary that says the job is ending, or
// that it ended, once its announcements were put in force (heard).
func (j *Job) peerEnding(from int, ending bool) {
	if !ending {
		return
	}
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	l := &j.rescale.lives
	if l.peersEnding == nil {
		l.peersEnding = map[int]bool{}
	}
	l.peersEnding[from] = true
}

// livesPending says whether a local instance that lives by its key
// groups has joined and its life has not ended. It holds j.rescale.mu.
func (j *Job) livesPending(rt *runtime.Runtime) bool {
	for _, lt := range j.rescale.lives.tasks {
		for inst, local := range lt.local {
			x := rt.Retirement(lt.name, inst)
			if local && x.Joins() != migrate.Never && !x.Ended() {
				return true
			}
		}
	}
	return false
}
