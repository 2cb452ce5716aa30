package engine

import (
	"errors"
	"fmt"
	"github.com/weirstream/weir/internal/checkpoint"
	"slices"
	"strconv"
	"strings"

	"github.com/weirstream/weir/internal/migrate"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/runtime"
)

// A process leaves a running job in three moves, planned at once and
// announced together: its keyed instances hand their key groups over to
// instances of the processes that stay (only theirs move: migrate.Evict),
// in steps of the rescale's strategy; then, from the epoch after the last
// step, every task instance of the process retires (runtime.Retirement):
// it ends after the epoch before with a final marker, its senders elsewhere
// drop what they would send it later, and once all have ended the process
// sends its final summary, closes its end of the mesh in order and its Run
// returns nil. The others go on; a peer that closed in order is not lost.

// leavePrefix names the announcement that a process leaves: a Reconfig
// named leave/<process> whose table (one key group on one instance)
// carries nothing but the epoch from which the process takes no part.
const leavePrefix = "leave/"

// taskPar is one task of the plan as the runtime names it, and its
// instance count.
type taskPar struct {
	name   string
	par    int
	source bool
}

// leaveState is what this process knows of leaving processes.
type leaveState struct {
	tasks []taskPar
	pl    placement
	rt    *runtime.Runtime
	// from holds, per process that leaves, the first epoch it takes no
	// part in.
	from map[int]uint64
	// twoPhase names the tasks with exactly-once (two-phase) outputs
	// that this process runs instances of.
	twoPhase map[string]bool
}

// twoPhase notes that task name writes a two-phase output.
func (j *Job) twoPhase(name string) {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	if j.rescale.leave.twoPhase == nil {
		j.rescale.leave.twoPhase = map[string]bool{}
	}
	j.rescale.leave.twoPhase[name] = true
}

// noteTasks records the tasks and where they run, for retiring them.
func (j *Job) noteTasks(p *plan.Physical, heads []string, pl placement, rt *runtime.Runtime) {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	l := &j.rescale.leave
	l.pl, l.rt, l.tasks = pl, rt, nil
	for ti, t := range p.Tasks {
		l.tasks = append(l.tasks, taskPar{name: heads[ti], par: t.Parallelism, source: j.Nodes[t.Head].Kind == plan.Source})
	}
}

// Leave asks process p to leave the running job: its key groups move to
// the instances of the other processes in steps by r's strategy, the
// shares its source instances read move to the others' instances at the
// first step, then every instance of p ends and p's Run returns nil.
// r.Instances is not used.
func (j *Job) Leave(p int, r Rescale) (Migration, error) {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	l := &j.rescale.leave
	if err := j.canLeave(p); err != nil {
		return Migration{}, err
	}
	if err := j.refuseEnding("leave"); err != nil {
		return Migration{}, err
	}
	rt, err := j.reconfigurable()
	if err != nil {
		return Migration{}, err
	}
	gone := func(par int) func(int) bool {
		return func(inst int) bool {
			q := l.pl.proc(inst, par)
			return q == p || l.from[q] > 0 || !j.slots.present(q)
		}
	}
	evict := func(par int, old *partition.Table, from uint64) (*partition.Table, error) {
		return migrate.Evict(old, gone(par), from)
	}
	var mg Migration
	var sp []sharePlan
	var announce [][]byte
	var at uint64
	var lp livesPlan
	defer j.settingJoins()() // until it is over (idle_parts.go)
	from, err := j.addStarting(rt, func(from uint64) ([]routing.Addition, error) {
		var kp []plannedSteps
		var shareAnn [][]byte
		var err error
		if kp, mg, announce, err = j.planKeyed(j.keyedSchedules(), from, r, evict); err != nil {
			return nil, err
		}
		// Instances that take the leaver's key groups start, if they
		// do not run.
		lp = j.planLives(rt, kp, from)
		sp, _, shareAnn, err = j.planShares(from, func(name string, par int) []int {
			return stayingReaders(j.splits.sources[name].sched.At(from-1), par, gone(par))
		}, true)
		if err != nil {
			return nil, fmt.Errorf("weir: leave: %w", err)
		}
		at = from
		if mg.Steps > 0 {
			// The last step is handed over at the marker before it; the
			// instances retire at the marker after.
			at = max(at, mg.Last+1)
		}
		if len(sp) > 0 {
			at = max(at, from+1) // the sources hand their shares over first
		}
		t, err := partition.NewTable(at, 1, []int{0})
		if err != nil {
			return nil, err
		}
		b, err := migrate.Encode(migrate.Reconfig{Operator: leavePrefix + strconv.Itoa(p), Table: t})
		if err != nil {
			return nil, err
		}
		announce = append(append(announce, shareAnn...), b)
		if size := announceSize(announce); size > maxAnnounce {
			return nil, fmt.Errorf("weir: leave: its %d steps take %d bytes to announce, more than %d; use fewer steps (batched, PerPair) or fewer key groups", mg.Steps, size, maxAnnounce)
		}
		return append(keyedAdditions(kp), shareAdditions(sp)...), nil
	}, j.livesJoin(&lp))
	if err != nil {
		return Migration{}, err
	}
	if err := lp.missedRemote(rt); err != nil {
		j.failRun(err) // the tables are in force: the run cannot go on
		return Migration{}, err
	}
	for _, s := range sp {
		mg.Sources = append(mg.Sources, s.src.name)
	}
	lp.retire()
	j.retire(p, at)
	if mg.Steps == 0 {
		mg.First = from
	}
	mg.Leave, mg.Last = at, max(mg.Last, at)
	j.rescale.announced, j.rescale.last = announce, mg.Last
	j.kickSummaries()
	return mg, nil
}

// canLeave refuses a leave of process p that cannot be carried out. It
// holds j.rescale.mu.
func (j *Job) canLeave(p int) error {
	l := &j.rescale.leave
	n := j.Processes()
	switch {
	case n < 2:
		return errors.New("weir: leave: the job runs in one process, which cannot leave it")
	case p < 0 || p >= n:
		return fmt.Errorf("weir: leave: there is no process %d; the job has processes 0 to %d", p, n-1)
	case l.from[p] > 0:
		return fmt.Errorf("weir: leave: process %d leaves already, from epoch %d", p, l.from[p])
	case !j.slots.present(p):
		return fmt.Errorf("weir: leave: process %d has not joined the job", p)
	case len(l.from)+len(j.slots.absent())+1 >= n:
		return errors.New("weir: leave: every other process leaves already; one must stay")
	case j.microBatched():
		return fmt.Errorf("weir: leave: partitioning %s runs its rounds in every process from the job's start to its end; use hash, roundrobin or auto", j.Cfg.Partitioning)
	case len(j.rescale.unmovable) > 0:
		return fmt.Errorf("weir: leave: %s keeps keyed state of its own (declared with KeyedState), which cannot move with its key groups", strings.Join(j.rescale.unmovable, ", "))
	}
	for _, t := range l.tasks {
		if !j.staysSomewhere(t, p) {
			return fmt.Errorf("weir: leave: %s runs only on process %d (in %d instance(s)), and an instance cannot move to another process; ask another process to leave, or give %s an instance on every process (weir.Parallelism)", t.name, p, t.par, t.name)
		}
		for inst := range t.par {
			if l.pl.proc(inst, t.par) != p {
				continue
			}
			if src := j.splits.sources[t.name]; t.source && (src == nil || !src.canMove()) {
				why := "its source cannot move its shares (time-based epochs, a weir.Rescalable reader and a name of its own are needed)"
				if src == nil {
					if w, ok := j.splits.kept[t.name]; ok {
						why = w
					}
				}
				return fmt.Errorf("weir: leave: process %d reads source %s (instance %d): %s", p, t.name, inst, why)
			}
			if l.twoPhase[t.name] {
				return fmt.Errorf("weir: leave: process %d writes exactly-once output in %s (instance %d), which it could not commit once it has left", p, t.name, inst)
			}
		}
	}
	return nil
}

// staysSomewhere says whether task t keeps an instance on a process
// that stays, once p has left. It holds j.rescale.mu.
func (j *Job) staysSomewhere(t taskPar, p int) bool {
	l := &j.rescale.leave
	for inst := range t.par {
		if q := l.pl.proc(inst, t.par); q != p && l.from[q] == 0 && j.slots.present(q) {
			return true
		}
	}
	return false
}

// stayingReaders are the instances that read a source's shares from the
// leave on: those of cur (the share table in force) that stay, or the
// first staying instance if none does.
func stayingReaders(cur *partition.Table, par int, gone func(int) bool) []int {
	var out []int
	for i := range cur.Groups() {
		if r := cur.Owner(partition.KeyGroup(i)); !gone(r) {
			out = append(out, r)
		}
	}
	if len(out) > 0 {
		return out
	}
	for i := range par {
		if !gone(i) {
			return []int{i}
		}
	}
	return nil
}

// canRetire refuses a retirement from epoch at that a task of this
// process may have reached already: a source ends an epoch only once the
// clock has passed it.
func (j *Job) canRetire(at uint64) error {
	if rt := j.rescale.leave.rt; rt != nil && uint64(rt.WallEpoch())+1 >= at {
		return fmt.Errorf("epoch %d, from which a process leaves, has begun here already (the clock is at epoch %d): %w",
			at, rt.WallEpoch(), routing.ErrTooLate)
	}
	return nil
}

// retire makes every instance of process p retire from epoch at, here.
// It holds j.rescale.mu.
func (j *Job) retire(p int, at uint64) {
	l := &j.rescale.leave
	if l.from == nil {
		l.from = map[int]uint64{}
	}
	l.from[p] = at
	j.mu.Lock()
	h, sp := j.handovers, j.splits
	j.mu.Unlock()
	if h != nil {
		// No plan gives p key groups after its retirement; steps planned
		// before may until then.
		h.closeAfter(p, at)
	}
	if sp != nil {
		// Nor source shares.
		sp.leaves(p)
	}
	if j.coord != nil {
		j.coord.left(p, at)
	}
	for _, t := range l.tasks {
		for inst := range t.par {
			// (An instance that retired before, by its key groups,
			// stays retired then.)
			if x := l.rt.Retirement(t.name, inst); l.pl.proc(inst, t.par) == p && (x.From() == migrate.Never || x.From() > at) {
				x.Set(at)
			}
		}
	}
}

// applyLeave puts in force a peer's announcement that process p leaves.
func (j *Job) applyLeave(op string, t *partition.Table) (bool, error) {
	ps, ok := strings.CutPrefix(op, leavePrefix)
	if !ok {
		return false, nil
	}
	p, err := strconv.Atoi(ps)
	if err != nil || p < 0 || p >= j.Processes() {
		return true, fmt.Errorf("a leave of an unknown process %q", ps)
	}
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	if at := j.rescale.leave.from[p]; at == t.From || j.slots.from(p) >= t.From {
		return true, nil // heard already, or the leave of a process before the slot's newest
	} else if at > 0 {
		return true, fmt.Errorf("process %d leaves from epoch %d, and from %d", p, at, t.From)
	}
	if err := j.canRetire(t.From); err != nil {
		return true, err
	}
	j.retire(p, t.From)
	return true, nil
}

// leaving says whether this process leaves the job.
func (j *Job) leaving() bool {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	return j.rescale.leave.from[j.Process()] > 0
}

// left records that process p takes no part in the checkpoints from
// epoch at on.
func (c *coordinator) left(p int, at uint64) {
	c.leftMu.Lock()
	defer c.leftMu.Unlock()
	if c.gone == nil {
		c.gone = map[int]uint64{}
	}
	c.gone[p] = at
}

// joins records that process p, absent until now, takes part in the
// checkpoints from epoch at on.
func (c *coordinator) joins(p int, at uint64) {
	c.leftMu.Lock()
	defer c.leftMu.Unlock()
	if c.absent == nil {
		c.absent = map[int]uint64{}
	}
	c.absent[p] = at
}

// outOf returns the processes that left or were absent. It holds
// c.leftMu.
func (c *coordinator) outOf() []int {
	var out []int
	for p := range c.gone {
		out = append(out, p)
	}
	for p := range c.absent {
		if _, ok := c.gone[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

// writeLeft writes, on the checkpoint's leader, the parts of the
// processes that have left the job for the checkpoint of part (or not
// joined it yet): empty, since they hold nothing from the epoch they
// left on (their key groups moved, their instances ended), so that the
// checkpoint completes with the parts of the processes that stay.
func (c *coordinator) writeLeft(part checkpoint.Part) error {
	if c.leader(part.Checkpoint) != c.self {
		return nil
	}
	c.leftMu.Lock()
	var gone []int
	for _, p := range c.outOf() {
		if c.away(p, part.Checkpoint) {
			gone = append(gone, p)
		}
	}
	c.leftMu.Unlock()
	slices.Sort(gone)
	for _, p := range gone {
		empty := checkpoint.Part{Checkpoint: part.Checkpoint, Epoch: part.Epoch, Process: p, Processes: part.Processes, Meta: part.Meta}
		if err := c.writePart(empty); err != nil {
			return fmt.Errorf("weir: the part of process %d, which left the job, of checkpoint %d: %w", p, part.Checkpoint, err)
		}
	}
	return nil
}

// away says whether process p writes no part of its own of checkpoint n:
// absent until it joins, gone once it left; a slot taken again after its
// leave is gone from the leave to the join. It holds c.leftMu.
func (c *coordinator) away(p int, n uint64) bool {
	left, gone := c.gone[p]
	join, absent := c.absent[p]
	switch {
	case gone && absent && join > left:
		return left <= n && n < join
	case gone:
		return left <= n
	case absent:
		return n < join
	}
	return false
}

// awaySelf says whether this process is away from checkpoint n: it left
// the job at or before n's epoch, and the checkpoint's leader writes its
// part.
func (c *coordinator) awaySelf(n uint64) bool {
	c.leftMu.Lock()
	defer c.leftMu.Unlock()
	return c.away(c.self, n)
}
