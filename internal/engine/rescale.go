package engine

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/internal/migrate"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/runtime"
)

// Rescale asks a running job to move its keyed operators' key groups
// over Instances of their instances (the first ones), in steps by
// Strategy.
type Rescale struct {
	Instances int
	Strategy  migrate.Strategy
	// Gap is the epochs between steps (0: 1); PerPair and MaxPerStep are
	// migrate.Options'.
	Gap                 uint64
	PerPair, MaxPerStep int
	// Loads, when given for the keyed group of par instances, are its
	// key groups' loads (records a second, say): the group is then placed
	// by load and moved state (internal/placement), not in contiguous
	// ranges.
	Loads map[int][]float64
}

// Migration is a reconfiguration announced: its steps take force at
// epochs First to Last.
type Migration struct {
	First, Last uint64
	Steps       int
	// Moves is the key groups that change owner, summed over the keyed
	// operators' groups.
	Moves int
	// Sources are the sources whose shares move at First; Kept says of
	// the others why they stay as they are ("name: why").
	Sources, Kept []string
	// Leave, when a process leaves, is the first epoch it takes no part
	// in (Last is then at least Leave); Join, when one joins, the first
	// it takes part in.
	Leave, Join uint64
}

// rescaleState is the job's side of reconfigurations: the ones this
// process asked for last, which its summaries announce, and the epoch
// its terminal tasks completed last.
type rescaleState struct {
	mu        sync.Mutex
	announced [][]byte
	// last is the epoch of the announced rescale's last step: once this
	// process has completed it, every process has routed by it, and the
	// announcement stops.
	last      uint64
	completed atomic.Uint64
	// unmovable names the keyed operators whose state cannot move.
	unmovable []string
	// pars are the instance counts of the keyed tasks, whose schedules
	// a rescale changes.
	pars map[int]bool
	// leave is what this process knows of processes that leave.
	leave leaveState
	// join is how this process, when it admits joins (admit.go), moves
	// key groups onto a process that joins; joined the last join it
	// planned (Join 0: none yet).
	join   Rescale
	joined Migration
	// ended holds, per peer whose final summary came, the epoch its
	// slot took part from then (which process of the slot it was);
	// admitKick wakes the admission when one comes.
	ended     map[int]uint64
	admitKick chan struct{}
	// heard holds, by peer, the announcement of its last put in force.
	heard map[int][][]byte
	// lives is the tasks whose instances live by their key groups.
	lives livesState
}

// keyed notes a keyed task of par instances.
func (j *Job) keyed(par int) {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	if j.rescale.pars == nil {
		j.rescale.pars = map[int]bool{}
	}
	j.rescale.pars[par] = true
}

// keyedSchedules returns the schedules of the keyed tasks.
func (j *Job) keyedSchedules() map[int]*routing.Schedule {
	out := map[int]*routing.Schedule{}
	for par := range j.rescale.pars {
		out[par] = j.Schedule(par)
	}
	return out
}

// maxAnnounce bounds the bytes of a rescale's announcement, which every
// summary repeats. Each keyed group's steps are announced in one
// encoding (migrate.EncodeSteps) of a few bytes a step past the first
// table, and migrate.MaxStepOwners bounds the tables they decode into:
// a fluid rescale over 4096 key groups takes some 22 KiB.
const maxAnnounce = 1 << 20

// routingName names the keyed operators of par instances in a Reconfig:
// one schedule routes them all.
func routingName(par int) string { return "keyed/" + strconv.Itoa(par) }

// Rescale puts a reconfiguration in force from an epoch far enough ahead
// for every process to hear of it, and announces it to the others: the
// keyed operators' key groups move in steps from that epoch, and the
// movable sources' shares move onto their first instances at it.
func (j *Job) Rescale(r Rescale) (Migration, error) {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	rt, err := j.reconfigurable()
	if err != nil {
		return Migration{}, err
	}
	if err := j.refuseEnding("rescale"); err != nil {
		return Migration{}, err
	}
	if len(j.rescale.unmovable) > 0 {
		return Migration{}, fmt.Errorf("weir: rescale: %s keeps keyed state of its own (declared with KeyedState), which cannot move with its key groups", strings.Join(j.rescale.unmovable, ", "))
	}
	scheds := j.keyedSchedules()
	srcs := map[string]*shareSource{}
	for name, src := range j.splits.sources {
		if src.canMove() {
			srcs[name] = src
		}
	}
	if len(scheds) == 0 && len(srcs) == 0 {
		return Migration{}, errors.New("weir: rescale: the job has neither keyed operators nor sources whose shares can move")
	}
	if r.Instances < 1 {
		return Migration{}, fmt.Errorf("weir: rescale to %d instances: must be at least 1", r.Instances)
	}
	most, what := 0, "keyed operators"
	for par := range scheds {
		most = max(most, par)
	}
	if len(scheds) == 0 {
		for _, src := range srcs {
			most, what = max(most, src.par), "sources"
		}
	}
	if r.Instances > most {
		return Migration{}, fmt.Errorf("weir: rescale to %d instances: the %s run %d instances, the most they can use; start the job with more workers (and ActiveInstances to leave some idle)", r.Instances, what, most)
	}
	targets, err := j.targetsOf(r.Instances, scheds)
	if err != nil {
		return Migration{}, err
	}
	contiguous := func(par int, _ *partition.Table, from uint64) (*partition.Table, error) {
		to := targets[par]
		t := partition.Contiguous(j.Cfg.KeyGroups, len(to))
		owner := make([]int, t.Groups())
		for kg := range owner {
			owner[kg] = to[t.Owner(partition.KeyGroup(kg))]
		}
		return partition.NewTable(from, par, owner)
	}
	var mg Migration
	var sp []sharePlan
	var kept []string
	var announce [][]byte
	var lp livesPlan
	defer j.settingJoins()() // until it is over (idle_parts.go)
	from, err := j.addStarting(rt, func(from uint64) ([]routing.Addition, error) {
		var kp []plannedSteps
		var shareAnn [][]byte
		var err error
		if kp, mg, announce, err = j.planKeyed(scheds, from, r, j.placedTarget(r, targets, contiguous)); err != nil {
			return nil, err
		}
		lp = j.planLives(rt, kp, from)
		if sp, kept, shareAnn, err = j.planShares(from, func(_ string, par int) []int { return targets[par] }, false); err != nil {
			return nil, err
		}
		announce = append(announce, shareAnn...)
		if size := announceSize(announce); size > maxAnnounce {
			return nil, fmt.Errorf("weir: rescale: its %d steps take %d bytes to announce, more than %d; use fewer steps (batched, PerPair) or fewer key groups", mg.Steps, size, maxAnnounce)
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
	lp.retire()
	for _, p := range sp {
		mg.Sources = append(mg.Sources, p.src.name)
		if mg.Steps == 0 {
			mg.First = from
		}
		mg.Last, mg.Steps = max(mg.Last, from), max(mg.Steps, 1)
	}
	mg.Kept = kept
	j.rescale.announced, j.rescale.last = announce, mg.Last
	j.kickSummaries()
	return mg, nil
}

// reconfigurable returns the running job's runtime, or why its routing
// cannot change.
func (j *Job) reconfigurable() (*runtime.Runtime, error) {
	j.mu.Lock()
	rt, running := j.rt, j.statsReady
	j.mu.Unlock()
	if rt == nil || !running {
		return nil, errors.New("weir: rescale: the job is not running")
	}
	return rt, j.canRescale()
}

// lead is the epochs a reconfiguration's first epoch is put ahead of
// those entered: 2 in one process, in a job of several at least 1.5 s of
// epochs (the summaries that announce it go out a few times a second).
func (j *Job) lead() uint64 {
	lead := uint64(2)
	if j.Processes() > 1 {
		lead = max(lead, uint64((1500*time.Millisecond+j.Cfg.Interval-1)/j.Cfg.Interval)+1)
	}
	return lead
}

// entered is the newest epoch this process has entered, by its senders,
// receivers and sources, the clock and the epochs completed; it refuses
// while the last reconfiguration is under way.
func (j *Job) entered(rt *runtime.Runtime) (uint64, error) {
	if inst := j.livesBusy(rt); inst != "" {
		return 0, fmt.Errorf("%w: %s ends with the last one and has not yet; ask again once it has", errBusy, inst)
	}
	e := j.clockOrCompleted(rt)
	for _, s := range j.routedSchedules() {
		if last := s.Last().From; last > max(e, s.Reached()) {
			return 0, fmt.Errorf("%w: the last one is under way until epoch %d; ask again once it is over", errBusy, last)
		}
	}
	return j.enteredNow(rt, 0), nil
}

// enteredNow is the newest epoch the process has entered, as entered
// measures it (without its refusals), and at least from; the epochs its
// peers' markers ended count (a peer ahead has entered them: a join
// there would come too late for its markers, missedRemote).
func (j *Job) enteredNow(rt *runtime.Runtime, from uint64) uint64 {
	e := max(from, j.clockOrCompleted(rt), rt.RemoteMarked())
	for _, s := range j.routedSchedules() {
		e = max(e, s.Reached())
	}
	return e
}

// clockOrCompleted is the newest epoch this process completed or, with
// time-based epochs, the clock is in, if later.
func (j *Job) clockOrCompleted(rt *runtime.Runtime) uint64 {
	e := j.CompletedEpoch()
	if j.Cfg.EpochRecords == 0 {
		e = max(e, uint64(rt.WallEpoch()))
	}
	return e
}

// routedSchedules are the schedules of the keyed groups and the sources'
// shares.
func (j *Job) routedSchedules() []*routing.Schedule {
	var all []*routing.Schedule
	for _, s := range j.keyedSchedules() {
		all = append(all, s)
	}
	for _, src := range j.splits.sources {
		all = append(all, src.sched)
	}
	return all
}

// plannedSteps are the steps planned for one keyed schedule.
type plannedSteps struct {
	s     *routing.Schedule
	steps []migrate.Step
}

// planKeyed plans the steps of every keyed group from epoch from to the
// table target gives, before any table is added, so that a refusal adds
// nothing anywhere, and returns them with their figures and
// announcements.
func (j *Job) planKeyed(scheds map[int]*routing.Schedule, from uint64, r Rescale,
	target func(par int, old *partition.Table, from uint64) (*partition.Table, error)) ([]plannedSteps, Migration, [][]byte, error) {
	var plans []plannedSteps
	var mg Migration
	var announce [][]byte
	for par, s := range scheds {
		old := s.At(from - 1)
		want, err := target(par, old, from)
		if err != nil {
			return nil, mg, nil, fmt.Errorf("weir: rescale: %w", err)
		}
		steps, err := migrate.Plan(old, want, r.Strategy, migrate.Options{Gap: r.Gap, PerPair: r.PerPair, MaxPerStep: r.MaxPerStep})
		if err != nil {
			return nil, mg, nil, fmt.Errorf("weir: rescale: %w", err)
		}
		plans = append(plans, plannedSteps{s, steps})
		tables := make([]*partition.Table, len(steps))
		for i, st := range steps {
			tables[i] = st.Table
			mg.Moves += len(st.Moves)
			if mg.Steps == 0 || st.Table.From < mg.First {
				mg.First = st.Table.From
			}
			mg.Last = max(mg.Last, st.Table.From)
			mg.Steps = max(mg.Steps, i+1)
		}
		if len(steps) == 0 {
			continue
		}
		// One announcement for all the steps of the group.
		b, err := migrate.EncodeSteps(routingName(par), tables)
		if err != nil {
			return nil, mg, nil, fmt.Errorf("weir: rescale: its %d steps cannot be announced: %w; use fewer steps (batched, PerPair) or fewer key groups", len(steps), err)
		}
		announce = append(announce, b)
	}
	return plans, mg, announce, nil
}

func announceSize(recs [][]byte) int {
	n := 0
	for _, b := range recs {
		n += len(b)
	}
	return n
}

// canRescale refuses the jobs whose keyed routing cannot change while
// they run.
func (j *Job) canRescale() error {
	switch {
	case j.Cfg.Ordered:
		return errors.New("weir: rescale: an ordered job's keyed exchanges restore the input order by instance and cannot change owners while it runs")
	case j.Processes() > 1 && j.Cfg.EpochRecords > 0:
		return errors.New("weir: rescale: the processes of a job with count-based epochs number them apart, so none can name an epoch ahead of all; use time-based epochs")
	}
	return nil
}

// announced returns the reconfigurations this process's summaries carry.
func (j *Job) announced() [][]byte {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	if j.CompletedEpoch() >= j.rescale.last {
		j.rescale.announced = nil
	}
	return j.rescale.announced
}

// heard puts in force the reconfigurations a peer announced; one that
// is malformed or comes too late for this process fails the job. A peer
// repeats its announcement in every summary: one equal to the last put
// in force is not decoded again (the encodings are canonical).
func (j *Job) heard(from int, recs [][]byte) {
	j.rescale.mu.Lock()
	last := j.rescale.heard[from]
	j.rescale.mu.Unlock()
	if len(recs) == 0 || slices.EqualFunc(recs, last, bytes.Equal) {
		return
	}
	for _, b := range recs {
		rcs, err := migrate.DecodeSteps(b)
		if err == nil && len(rcs) > 0 && strings.HasPrefix(rcs[0].Operator, "keyed/") {
			err = j.applyKeyed(rcs)
			rcs = nil
		}
		for _, rc := range rcs {
			if err == nil {
				err = j.applyReconfig(rc)
			}
		}
		if err != nil {
			j.failRun(fmt.Errorf("weir: process %d announced a rescale this process cannot follow: %w", from, err))
			return
		}
	}
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	if j.rescale.heard == nil {
		j.rescale.heard = map[int][][]byte{}
	}
	j.rescale.heard[from] = recs
}

func (j *Job) applyReconfig(rc migrate.Reconfig) error {
	if ok, err := j.applyLeave(rc.Operator, rc.Table); ok {
		return err
	}
	if ok, err := j.applyJoin(rc.Operator, rc.Table); ok {
		return err
	}
	if name, ok := strings.CutPrefix(rc.Operator, "source/"); ok {
		return j.applyShares(name, rc.Table)
	}
	_, s, err := j.keyedGroup(rc.Operator)
	if err != nil || j.beforeBoot(rc.Table) {
		return err
	}
	return tooLate(s.Add(rc.Table))
}

// tooLate says of ErrTooLate that the announcement came too late.
func tooLate(err error) error {
	if errors.Is(err, routing.ErrTooLate) {
		return fmt.Errorf("%w (the announcement came too late: a longer epoch interval or a quieter network gives it more time)", err)
	}
	return err
}

// keyedGroup returns the instance count and schedule of the keyed
// operators a reconfiguration names ("keyed/N").
func (j *Job) keyedGroup(name string) (int, *routing.Schedule, error) {
	par, ok := strings.CutPrefix(name, "keyed/")
	p, err := strconv.Atoi(par)
	if !ok || err != nil || p < 1 {
		return 0, nil, fmt.Errorf("an unknown routing group %q", name)
	}
	j.rescale.mu.Lock()
	known := j.rescale.pars[p]
	j.rescale.mu.Unlock()
	if !known {
		return 0, nil, fmt.Errorf("no keyed operators of %d instances", p)
	}
	return p, j.Schedule(p), nil
}

// beforeBoot says whether t, a table a peer announced, took force before
// the epoch this process joined the job at: the bootstrap it started from
// holds what was in force then, and the peer's announcement is older (a
// leave's steps, announced by a process that lags, say); adding it would
// put a superseded table back in force here.
func (j *Job) beforeBoot(t *partition.Table) bool {
	return j.boot != nil && t.From < j.boot.at
}

// failRun stops the run with err.
func (j *Job) failRun(err error) {
	j.mu.Lock()
	rt := j.rt
	j.mu.Unlock()
	if rt != nil {
		rt.Stop(err)
	}
}

// RescaleFigures are what the key-group handovers of this process moved
// so far.
type RescaleFigures struct {
	// Bytes is the state sent, deltas at their size; Whole what the same
	// state would have taken had every key group gone whole.
	Bytes, Whole int64
	KeyGroups    int64
	// Deltas counts the blobs (an operator's state of a key group) sent
	// as deltas on a checkpoint, by operator.
	Deltas map[string]int64
}

// RescaleFigures returns what the key-group handovers of this process
// moved so far.
func (j *Job) RescaleFigures() RescaleFigures {
	j.mu.Lock()
	h := j.handovers
	j.mu.Unlock()
	if h == nil {
		return RescaleFigures{}
	}
	return RescaleFigures{Bytes: h.moved.Load(), Whole: h.reuse.whole.Load(), KeyGroups: h.keys.Load(), Deltas: h.reuse.sent()}
}

// CompletedEpoch is the newest epoch this process has completed: the
// newest its terminal tasks have all completed or, if later, the newest
// every task instance of it that runs has (the only measure in a process
// without terminal tasks, whose keyed operators feed sinks elsewhere).
// Once it is at a step's epoch, the handovers of the step are done here.
func (j *Job) CompletedEpoch() uint64 {
	e := j.rescale.completed.Load()
	if reg := j.registry(); reg != nil {
		e = max(e, reg.Completed())
	}
	return e
}

// Done returns a channel closed once the running job's runtime stopped,
// or nil before it runs.
func (j *Job) Done() <-chan struct{} {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.rt == nil {
		return nil
	}
	return j.rt.Done()
}
