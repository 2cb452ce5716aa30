package engine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/internal/migrate"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/routing"
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
}

// Migration is a reconfiguration announced: its steps take force at
// epochs First to Last.
type Migration struct {
	First, Last uint64
	Steps       int
	// Moves is the key groups that change owner, summed over the keyed
	// operators' groups.
	Moves int
	// Leave, when a process leaves, is the first epoch it takes no part
	// in (Last is then at least Leave).
	Leave uint64
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
// summary repeats.
const maxAnnounce = 1 << 20

// routingName names the keyed operators of par instances in a Reconfig:
// one schedule routes them all.
func routingName(par int) string { return "keyed/" + strconv.Itoa(par) }

// Rescale puts a reconfiguration in force from an epoch far enough ahead
// for every process to hear of it, and announces it to the others.
func (j *Job) Rescale(r Rescale) (Migration, error) {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	if r.Instances < 1 {
		return Migration{}, fmt.Errorf("weir: rescale to %d instances: must be at least 1", r.Instances)
	}
	target := func(par int, old *partition.Table, from uint64) (*partition.Table, error) {
		// A group of fewer instances spreads over all of them.
		t := partition.Contiguous(j.Cfg.KeyGroups, min(r.Instances, par))
		owner := make([]int, t.Groups())
		for kg := range owner {
			owner[kg] = t.Owner(partition.KeyGroup(kg))
		}
		return partition.NewTable(from, par, owner)
	}
	check := func(scheds map[int]*routing.Schedule) error {
		most := 0
		for par := range scheds {
			most = max(most, par)
		}
		if r.Instances > most {
			return fmt.Errorf("weir: rescale to %d instances: the keyed operators run %d instances, the most they can use; start the job with more workers (and ActiveInstances to leave some idle)", r.Instances, most)
		}
		return nil
	}
	return j.reconfigure(r, check, target, nil)
}

// reconfigure plans, for every keyed group, the steps from the table in
// force at the first epoch far enough ahead to the table target gives,
// puts them in force here and announces them with what extra adds (it
// may refuse, and nothing is then added anywhere). It holds
// j.rescale.mu.
func (j *Job) reconfigure(r Rescale, check func(map[int]*routing.Schedule) error,
	target func(par int, old *partition.Table, from uint64) (*partition.Table, error),
	extra func(first uint64, mg *Migration) ([][]byte, func(), error)) (Migration, error) {
	j.mu.Lock()
	rt, running := j.rt, j.statsReady
	j.mu.Unlock()
	if rt == nil || !running {
		return Migration{}, errors.New("weir: rescale: the job is not running")
	}
	if err := j.canRescale(); err != nil {
		return Migration{}, err
	}
	if len(j.rescale.unmovable) > 0 {
		return Migration{}, fmt.Errorf("weir: rescale: %s keeps keyed state of its own (declared with KeyedState), which cannot move with its key groups", strings.Join(j.rescale.unmovable, ", "))
	}
	scheds := j.keyedSchedules()
	if len(scheds) == 0 {
		return Migration{}, errors.New("weir: rescale: the job has no keyed operators")
	}
	if err := check(scheds); err != nil {
		return Migration{}, err
	}
	e, lead, err := j.horizon(rt, scheds)
	if err != nil {
		return Migration{}, err
	}
	// Plan every group first: a refusal adds nothing anywhere.
	type planned struct {
		s     *routing.Schedule
		steps []migrate.Step
	}
	var plans []planned
	var mg Migration
	var announce [][]byte
	size := 0
	first := uint64(0)
	for par, s := range scheds {
		from := max(e, s.Reached()) + lead
		first = max(first, from)
		old := s.At(from - 1)
		want, err := target(par, old, from)
		if err != nil {
			return Migration{}, fmt.Errorf("weir: rescale: %w", err)
		}
		steps, err := migrate.Plan(old, want, r.Strategy, migrate.Options{Gap: r.Gap, PerPair: r.PerPair, MaxPerStep: r.MaxPerStep})
		if err != nil {
			return Migration{}, fmt.Errorf("weir: rescale: %w", err)
		}
		plans = append(plans, planned{s, steps})
		for i, st := range steps {
			b, err := migrate.Encode(migrate.Reconfig{Operator: routingName(par), Table: st.Table})
			if err != nil {
				return Migration{}, err
			}
			size += len(b)
			announce = append(announce, b)
			mg.Moves += len(st.Moves)
			if mg.Steps == 0 || st.Table.From < mg.First {
				mg.First = st.Table.From
			}
			mg.Last = max(mg.Last, st.Table.From)
			mg.Steps = max(mg.Steps, i+1)
		}
	}
	var apply func()
	if extra != nil {
		more, a, err := extra(first, &mg)
		if err != nil {
			return Migration{}, err
		}
		for _, b := range more {
			size += len(b)
		}
		announce, apply = append(announce, more...), a
	}
	if size > maxAnnounce {
		return Migration{}, fmt.Errorf("weir: rescale: its %d steps take %d bytes to announce, more than %d; use fewer steps (batched, PerPair) or fewer key groups", mg.Steps, size, maxAnnounce)
	}
	for _, p := range plans {
		for i, st := range p.steps {
			if err := p.s.Add(st.Table); err != nil {
				return Migration{}, fmt.Errorf("weir: rescale: step %d: %w", i, err)
			}
		}
	}
	if apply != nil {
		apply()
	}
	j.rescale.announced, j.rescale.last = announce, mg.Last
	j.kickSummaries()
	return mg, nil
}

// horizon returns the epoch every process has reached at most, as far as
// this one knows, and how many epochs past it a reconfiguration must
// start for every process to hear of it first; it refuses while the last
// reconfiguration is under way.
func (j *Job) horizon(rt interface{ WallEpoch() progress.Epoch }, scheds map[int]*routing.Schedule) (e, lead uint64, err error) {
	lead = 2
	if j.Processes() > 1 {
		// The summaries carry the announcement, a few times a second.
		lead = max(lead, uint64((1500*time.Millisecond+j.Cfg.Interval-1)/j.Cfg.Interval)+1)
	}
	e = j.rescale.completed.Load()
	if j.Cfg.EpochRecords == 0 {
		e = max(e, uint64(rt.WallEpoch()))
	}
	for _, s := range scheds {
		if last := s.Last().From; last > max(e, s.Reached()) {
			return 0, 0, fmt.Errorf("weir: rescale: the last one is under way until epoch %d; ask again once it is over", last)
		}
	}
	return e, lead, nil
}

// canRescale refuses the jobs whose keyed routing cannot change while
// they run.
func (j *Job) canRescale() error {
	switch {
	case j.Cfg.Ordered:
		return errors.New("weir: rescale: an ordered job's keyed exchanges restore the input order by instance and cannot change owners while it runs")
	case j.Cfg.Partitioning == partition.PKG.String() || j.Cfg.Partitioning == partition.Prompt.String():
		return fmt.Errorf("weir: rescale: partitioning %s spreads keys by load, not by key group; use hash or roundrobin", j.Cfg.Partitioning)
	case j.Processes() > 1 && j.Cfg.EpochRecords > 0:
		return errors.New("weir: rescale: the processes of a job with count-based epochs number them apart, so none can name an epoch ahead of all; use time-based epochs")
	}
	return nil
}

// announced returns the reconfigurations this process's summaries carry.
func (j *Job) announced() [][]byte {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	if j.rescale.completed.Load() >= j.rescale.last {
		j.rescale.announced = nil
	}
	return j.rescale.announced
}

// heard puts in force the reconfigurations a peer announced; one that
// comes too late for this process fails the job.
func (j *Job) heard(from int, recs [][]byte) {
	for _, b := range recs {
		rc, err := migrate.Decode(b)
		if err == nil {
			err = j.applyReconfig(rc)
		}
		if err != nil {
			j.failRun(fmt.Errorf("weir: process %d announced a rescale this process cannot follow: %w", from, err))
			return
		}
	}
}

func (j *Job) applyReconfig(rc migrate.Reconfig) error {
	if ok, err := j.applyLeave(rc.Operator, rc.Table); ok {
		return err
	}
	par, ok := strings.CutPrefix(rc.Operator, "keyed/")
	p, err := strconv.Atoi(par)
	if !ok || err != nil || p < 1 {
		return fmt.Errorf("an unknown routing group %q", rc.Operator)
	}
	j.rescale.mu.Lock()
	known := j.rescale.pars[p]
	j.rescale.mu.Unlock()
	s := j.Schedule(p)
	if !known {
		return fmt.Errorf("no keyed operators of %d instances", p)
	}
	err = s.Add(rc.Table)
	if errors.Is(err, routing.ErrTooLate) {
		return fmt.Errorf("%w (the announcement came too late: a longer epoch interval or a quieter network gives it more time)", err)
	}
	return err
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

// CompletedEpoch is the newest epoch this process's terminal tasks have
// all completed.
func (j *Job) CompletedEpoch() uint64 { return j.rescale.completed.Load() }

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
