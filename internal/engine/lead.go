package engine

import (
	"errors"
	"fmt"

	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/runtime"
)

// maxPlans bounds how many times addInTime plans a reconfiguration.
const maxPlans = 8

// addInTime plans a reconfiguration from the first free epoch and puts
// its tables in force, all or none, returning that epoch. The process
// goes on entering epochs while it plans; if it entered the first one
// meanwhile (the add comes too late), or more than half of the lead
// passed (the other processes could hear of it too late), nothing is
// added and it plans again from a later epoch, the lead grown by the
// epochs that passed: a busy process (a collection of a large heap, a
// loaded machine) plans more than once, and does not fail.
func (j *Job) addInTime(rt *runtime.Runtime, plan func(from uint64) ([]routing.Addition, error)) (uint64, error) {
	return j.addStarting(rt, plan, nil)
}

// addStarting is addInTime for a reconfiguration that starts instances:
// join, if set, sets their joins (at from-1 at the earliest) with the
// schedules' locks held, once the tables are found in time for them
// (routing.AddAllJoining): the plan then needs the process not to have
// entered from-1 either. Nothing is set if they are not. The joining
// instances' first checkpoints are announced before the tables are
// checked, so that no part of them is written without them, and
// withdrawn if the tables are not added.
func (j *Job) addStarting(rt *runtime.Runtime, plan func(from uint64) ([]routing.Addition, error), join joiner) (uint64, error) {
	lead, extra := j.lead(), uint64(0)
	for try := 1; ; try++ {
		base, err := j.entered(rt)
		if err != nil {
			return 0, err
		}
		from := base + lead + extra
		adds, err := plan(from)
		if err != nil {
			return 0, err
		}
		now, err := j.entered(rt)
		if err != nil {
			return 0, err
		}
		if inTime(from, now, lead) && (join == nil || from-1 > now) {
			if join == nil {
				err = routing.AddAll(adds)
			} else {
				join.announce()
				if err = routing.AddAllJoining(adds, join.join); err != nil {
					join.withdraw()
				}
			}
			if !errors.Is(err, routing.ErrTooLate) {
				if err != nil {
					return 0, fmt.Errorf("weir: rescale: %w", err)
				}
				return from, nil
			}
			now = j.enteredNow(rt, from)
		}
		if try == maxPlans {
			return 0, fmt.Errorf("weir: rescale: planned %d times, and each time the process entered its first epoch (%d at last) before it was put in force; the process is too busy for its epoch interval", try, from)
		}
		extra += now - base
	}
}

// joiner is what addStarting sets a plan's joins with.
type joiner interface {
	// announce sends the first checkpoint each joining local instance
	// reports to, before the tables are checked.
	announce()
	// join sets the joins, with the schedules' locks held.
	join()
	// withdraw takes back what announce sent: the tables came too late.
	withdraw()
}

// inTime reports whether a reconfiguration from epoch from still has at
// least half of its lead once the process has entered epoch now.
func inTime(from, now, lead uint64) bool {
	return from > now && from-now >= (lead+1)/2
}

// keyedAdditions are the tables of the planned steps.
func keyedAdditions(kp []plannedSteps) []routing.Addition {
	var adds []routing.Addition
	for _, p := range kp {
		tables := make([]*partition.Table, len(p.steps))
		for i, st := range p.steps {
			tables[i] = st.Table
		}
		adds = append(adds, routing.Addition{S: p.s, Tables: tables})
	}
	return adds
}

// shareAdditions are the tables of the planned moves of shares.
func shareAdditions(sp []sharePlan) []routing.Addition {
	var adds []routing.Addition
	for _, p := range sp {
		adds = append(adds, routing.Addition{S: p.src.sched, Tables: []*partition.Table{p.table}})
	}
	return adds
}
