package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/migrate"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/summary"
)

// A process joins a running elastic job as a leave goes, in reverse.
// The admitter (admit.go: process 0 until it leaves) lets it in: on the
// mesh's Joined event it plans, from an epoch J far enough ahead for every process to hear
// of it, that the slot takes part from J, and that its instances take
// key groups (migrate.Spread over the instances present, in steps of
// the rescale's strategy from J+1) and source shares (from J+1). It
// announces the plan like a rescale (join/<p>, then the steps) and sends
// the joiner what a restart would read from a checkpoint: the routing
// and share schedules in force at J and later, and which slots take
// part from when (bootstrap.go). Every process marks the slot's
// instances as taking part from J (runtime.Retirement.Join): outlets
// towards them drop markers until the one that ends J, and aligners wait
// for them from J on. The joiner starts its runtime at epoch J.

// joinPrefix names the announcement that a process joins: a Reconfig
// named join/<process> whose table carries the epoch it takes part from.
const joinPrefix = "join/"

// errBusy is what a reconfiguration meets while another is under way
// (its message continues with the one under way).
var errBusy = errors.New("weir: rescale")

// planJoin plans, announces and puts in force here that process p takes
// part from the first free epoch, and returns its bootstrap.
func (j *Job) planJoin(p int) ([]byte, Migration, error) {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	if j.admitter() != j.Process() {
		return nil, Migration{}, errNotAdmitter
	}
	if err := j.canJoin(p); err != nil {
		return nil, Migration{}, err
	}
	rt, err := j.reconfigurable()
	if err != nil {
		return nil, Migration{}, err
	}
	l := &j.rescale.leave
	on := func(par int) func(int) bool {
		return func(inst int) bool {
			q := l.pl.proc(inst, par)
			return q == p || j.slots.present(q) && l.from[q] == 0
		}
	}
	spread := func(par int, old *partition.Table, from uint64) (*partition.Table, error) {
		return migrate.Spread(old, on(par), from)
	}
	var mg Migration
	var sp []sharePlan
	var announce [][]byte
	// The joiner takes part from epoch at; the key groups and shares
	// move to it from at+1.
	at, err := j.addInTime(rt, func(at uint64) ([]routing.Addition, error) {
		var kp []plannedSteps
		var shareAnn [][]byte
		var err error
		if kp, mg, announce, err = j.planKeyed(j.keyedSchedules(), at+1, j.rescale.join, spread); err != nil {
			return nil, err
		}
		sp, _, shareAnn, err = j.planShares(at+1, func(name string, par int) []int {
			return joinedReaders(j.splits.sources[name].sched.At(at), par, func(inst int) bool { return l.pl.proc(inst, par) == p })
		}, false)
		if err != nil {
			return nil, err
		}
		t, err := partition.NewTable(at, 1, []int{0})
		if err != nil {
			return nil, err
		}
		b, err := migrate.Encode(migrate.Reconfig{Operator: joinPrefix + strconv.Itoa(p), Table: t})
		if err != nil {
			return nil, err
		}
		announce = append(append([][]byte{b}, announce...), shareAnn...)
		if size := announceSize(announce); size > maxAnnounce {
			return nil, fmt.Errorf("weir: join: its %d steps take %d bytes to announce, more than %d", mg.Steps, size, maxAnnounce)
		}
		return append(keyedAdditions(kp), shareAdditions(sp)...), nil
	})
	if err != nil {
		return nil, Migration{}, err
	}
	j.joined(p, at)
	for _, s := range sp {
		mg.Sources = append(mg.Sources, s.src.name)
	}
	if mg.Steps == 0 {
		mg.First = at
	}
	mg.Join, mg.Last = at, max(mg.Last, at+1)
	j.rescale.announced, j.rescale.last = announce, mg.Last
	j.rescale.joined = mg
	boot, err := j.bootstrap(p, at)
	if err != nil {
		return nil, Migration{}, err
	}
	j.kickSummaries()
	return boot, mg, nil
}

// canJoin refuses a join of process p that cannot be carried out. It
// holds j.rescale.mu.
func (j *Job) canJoin(p int) error {
	switch {
	case j.slots == nil:
		return errors.New("weir: join: the job is not elastic")
	case len(j.rescale.unmovable) > 0:
		return fmt.Errorf("weir: join: %s keeps keyed state of its own (declared with KeyedState), which cannot move with its key groups", strings.Join(j.rescale.unmovable, ", "))
	}
	return j.notEnding("join")
}

// notEnding refuses a join (what) once a process of the job (not one
// that left) has ended altogether: its input is read and its part done,
// so the job is ending, and the joiner's instances would wait for markers
// that its runtime, gone, no longer sends again; and a rescale that
// starts instances in other processes (lives.go), which may have ended
// since. It holds j.rescale.mu.
func (j *Job) notEnding(what string) error {
	j.mu.Lock()
	x := j.summaries
	j.mu.Unlock()
	if x == nil {
		return nil
	}
	for _, q := range x.Board().Ended(j.Process()) {
		if j.rescale.leave.from[q] == 0 {
			return fmt.Errorf("weir: %s: the job is ending: process %d has ended", what, q)
		}
	}
	if j.inputEnded(x.Board()) {
		return fmt.Errorf("weir: %s: the job is ending: its sources have all read their input", what)
	}
	return nil
}

// inputEnded says whether every source instance of the job that ran has
// ended, by this process's figures and its peers' newest: none runs
// and some ran. A present peer not heard from yet may run some. It holds
// j.rescale.mu.
func (j *Job) inputEnded(b *summary.Board) bool {
	j.mu.Lock()
	reg, ready := j.reg, j.statsReady
	j.mu.Unlock()
	if reg == nil || !ready {
		return false
	}
	procs := []metrics.ProcessStats{reg.Snapshot(time.Now())}
	for q := range j.Processes() {
		if q == j.Process() || !j.slots.present(q) || j.rescale.leave.from[q] > 0 {
			continue
		}
		ps, ok := peerFigures(b, q)
		if !ok {
			return false
		}
		procs = append(procs, ps)
	}
	ran := false
	for _, ps := range procs {
		for _, in := range ps.Instances {
			if in.Source && in.Running {
				return false
			}
			ran = ran || in.Source && in.Lifetime > 0
		}
	}
	return ran
}

// joinedReaders are the readers of a source's shares once the instances
// joining says join in: those of cur (the share table in force) and
// then the joining ones, or nil if the source has none on the joiner.
func joinedReaders(cur *partition.Table, par int, joining func(int) bool) []int {
	var out, added []int
	for i := range cur.Groups() {
		out = append(out, cur.Owner(partition.KeyGroup(i)))
	}
	for i := range par {
		if joining(i) && !slices.Contains(out, i) {
			added = append(added, i)
		}
	}
	if len(added) == 0 {
		return nil
	}
	return append(out, added...)
}

// applyJoin puts in force a peer's announcement that process p joins.
// An announcement older than what this process knows of the slot (a
// join before its last leave, or before its newest join) changes
// nothing.
func (j *Job) applyJoin(op string, t *partition.Table) (bool, error) {
	ps, ok := strings.CutPrefix(op, joinPrefix)
	if !ok {
		return false, nil
	}
	p, err := strconv.Atoi(ps)
	if err != nil || p < 0 || p >= j.Processes() || j.slots == nil {
		return true, fmt.Errorf("a join of an unknown process %q", ps)
	}
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	at, left := j.slots.from(p), j.rescale.leave.from[p]
	switch {
	case at == t.From || at != notYet && t.From < at || left > 0 && t.From < left:
		return true, nil // heard already, or stale
	case at != notYet && left == 0:
		return true, fmt.Errorf("process %d takes part from epoch %d, and from %d", p, at, t.From)
	}
	if err := j.canRetire(t.From); err != nil {
		return true, fmt.Errorf("a process joins: %w", err)
	}
	j.joined(p, t.From)
	return true, nil
}

// joined makes process p take part from epoch at, here: its instances,
// the summaries, the handovers, the source notes and the checkpoints
// count it from then on. A slot that was left is taken again: what this
// process keeps of its last process (its leave, its instances'
// retirements, the closes sent to it) is undone. It holds j.rescale.mu.
func (j *Job) joined(p int, at uint64) {
	l := &j.rescale.leave
	again := l.from[p] > 0 && j.slots.present(p)
	if again && !j.slots.rejoin(p, at) || !again && !j.slots.set(p, at) {
		return
	}
	delete(l.from, p)
	for _, t := range l.tasks {
		for inst := range t.par {
			if l.pl.proc(inst, t.par) == p {
				l.rt.Retirement(t.name, inst).Join(at)
			}
		}
	}
	j.mu.Lock()
	x, h, sp, c := j.summaries, j.handovers, j.splits, j.coord
	j.mu.Unlock()
	switch {
	case x == nil:
	case again:
		x.Rejoin(p, j.slots.current(p))
	default:
		x.Join(p)
	}
	if h != nil {
		h.joined(p, again)
	}
	if sp != nil {
		sp.joined(p, again)
	}
	if c != nil {
		c.joins(p, at)
	}
}

// markAbsent marks, before the run, the instances of the slots without a
// process as absent: senders drop what they would send them, receivers
// do not wait for them, until they join. It holds nothing.
func (j *Job) markAbsent() {
	absent := j.slots.absent()
	if len(absent) == 0 {
		return
	}
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	l := &j.rescale.leave
	for _, t := range l.tasks {
		for inst := range t.par {
			if slices.Contains(absent, l.pl.proc(inst, t.par)) {
				l.rt.Retirement(t.name, inst).Absent()
			}
		}
	}
}

// targetsOf is, by an operator's instance count, the instances a rescale
// to n spreads it over (rescaleTargets), for the keyed operators of
// scheds and every source: a source that cannot move gets an empty list,
// so that the plan names it among those kept. It refuses, for the
// smallest count first, what rescaleTargets refuses for a keyed operator
// or a source that can move. It holds j.rescale.mu.
func (j *Job) targetsOf(n int, scheds map[int]*routing.Schedule) (map[int][]int, error) {
	movable := map[int]bool{}
	for par := range scheds {
		movable[par] = true
	}
	for _, src := range j.splits.sources {
		movable[src.par] = movable[src.par] || src.canMove()
	}
	pars := slices.Sorted(maps.Keys(movable))
	out := map[int][]int{}
	for _, par := range pars {
		t, err := j.rescaleTargets(n, par)
		switch {
		case err != nil && movable[par]:
			return nil, err
		case err != nil:
			t = []int{}
		}
		out[par] = t
	}
	return out, nil
}

// rescaleTargets is the instances of an operator of par instances that a
// rescale to n spreads its key groups or shares over: the first n of
// those whose process takes part in the job (it has joined, and it
// neither leaves nor has left), or all of those when par is at most n.
// It refuses when par is more than n and fewer than n take part, naming
// the first instance that does not, or when none takes part. It holds
// j.rescale.mu.
func (j *Job) rescaleTargets(n, par int) ([]int, error) {
	l := &j.rescale.leave
	var out []int
	absent := -1
	for inst := 0; inst < par && len(out) < n; inst++ {
		q := l.pl.proc(inst, par)
		if j.slots.present(q) && l.from[q] == 0 {
			out = append(out, inst)
		} else if absent < 0 {
			absent = inst
		}
	}
	if len(out) == n || len(out) > 0 && par <= n {
		return out, nil
	}
	q := l.pl.proc(absent, par)
	why := "has not joined the job"
	if l.from[q] > 0 {
		why = fmt.Sprintf("leaves the job (or has left it) from epoch %d", l.from[q])
	}
	return nil, fmt.Errorf("weir: rescale to %d: of the %d instances of an operator, %d run on processes that take part (instance %d runs in process %d, which %s)", n, par, len(out), absent, q, why)
}

// AdmitWith sets how this process of an elastic job moves key groups
// onto the processes that join, when it admits them (admit.go; set it on
// every process that may: r.Instances is not used).
func (j *Job) AdmitWith(r Rescale) {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	j.rescale.join = r
}

// LastJoin is the last join this process let in, if any.
func (j *Job) LastJoin() (Migration, bool) {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	return j.rescale.joined, j.rescale.joined.Join > 0
}
