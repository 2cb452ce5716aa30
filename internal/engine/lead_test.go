package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/runtime"
)

// leadJob is a job of one process with keyed operators of 2 instances
// over 8 key groups, whose epochs a test enters by hand.
func leadJob() (*Job, *runtime.Runtime, *routing.Schedule) {
	j := &Job{Graph: &dataflow.Graph{Cfg: dataflow.JobConfig{KeyGroups: 8, EpochRecords: 1}}, splits: &splits{}}
	j.keyed(2)
	return j, runtime.New(runtime.Config{Interval: time.Second}), j.Schedule(2)
}

// moveAll is the table from epoch from that gives every key group to
// instance 1.
func moveAll(t *testing.T, from uint64) *partition.Table {
	tb, err := partition.NewTable(from, 2, []int{1, 1, 1, 1, 1, 1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// A process that enters the epoch a reconfiguration was planned from
// while it plans (a busy process) does not fail it: it is planned again
// from a later epoch, and only the second plan takes force.
func TestAddInTimePlansAgain(t *testing.T) {
	j, rt, s := leadJob()
	s.Enter(5)
	var froms []uint64
	got, err := j.addInTime(rt, func(from uint64) ([]routing.Addition, error) {
		froms = append(froms, from)
		if len(froms) == 1 {
			s.Enter(from + 1) // the senders go on while it plans
		}
		return []routing.Addition{{S: s, Tables: []*partition.Table{moveAll(t, from)}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(froms) != 2 || froms[0] != 7 || got != froms[1] || got <= 8 {
		t.Fatalf("planned from %v, in force from %d; want 7, then past 8", froms, got)
	}
	if s.At(got-1).Owner(0) != 0 || s.At(got).Owner(0) != 1 || len(s.Tables(0)) != 2 {
		t.Errorf("tables %v: want the first one, then the move from %d alone", s.Tables(0), got)
	}
}

// A process that always enters the first epoch before the add gives up
// after maxPlans plans with an error, having added nothing.
func TestAddInTimeGivesUp(t *testing.T) {
	j, rt, s := leadJob()
	plans := 0
	_, err := j.addInTime(rt, func(from uint64) ([]routing.Addition, error) {
		plans++
		s.Enter(from)
		return []routing.Addition{{S: s, Tables: []*partition.Table{moveAll(t, from)}}}, nil
	})
	if err == nil || !strings.Contains(err.Error(), "too busy") || plans != maxPlans {
		t.Fatalf("after %d plans: %v", plans, err)
	}
	if len(s.Tables(0)) != 1 {
		t.Errorf("tables %v: want the first alone", s.Tables(0))
	}
}

// A planning error is returned as it is, without planning again.
func TestAddInTimePlanError(t *testing.T) {
	j, rt, _ := leadJob()
	bad := errors.New("no plan")
	plans := 0
	if _, err := j.addInTime(rt, func(uint64) ([]routing.Addition, error) { plans++; return nil, bad }); !errors.Is(err, bad) || plans != 1 {
		t.Errorf("after %d plans: %v", plans, err)
	}
}

// A reconfiguration that starts instances sets their joins only while
// the process has not entered the epoch before its first step; if it
// has by the time the joins are set, they are undone (each joined
// instance retires, owning nothing, two epochs after the one entered at
// the earliest) and the plan is made again, its joins from a later epoch.
func TestAddStartingUndoesLateJoins(t *testing.T) {
	j, rt, s := leadJob()
	s.Enter(5)
	x := rt.Retirement("keyed", 1)
	x.Absent()
	var froms, undone []uint64
	start := func() func(uint64) {
		from := froms[len(froms)-1]
		undo := livesPlan{joins: []lifeChange{{x: x, epoch: from - 1, local: true}}}.start(nil, nil)
		if len(froms) == 1 {
			s.Enter(from) // the senders go on past from-1 meanwhile
		}
		return func(now uint64) {
			undone = append(undone, now)
			undo(now)
			if want := max(from, now+2); x.From() != want {
				t.Errorf("undone join at %d retires from %d; want %d", from-1, x.From(), want)
			}
		}
	}
	got, err := j.addStarting(rt, func(from uint64) ([]routing.Addition, error) {
		froms = append(froms, from)
		return []routing.Addition{{S: s, Tables: []*partition.Table{moveAll(t, from)}}}, nil
	}, start)
	if err != nil {
		t.Fatal(err)
	}
	if len(froms) != 2 || got != froms[1] || len(undone) != 1 || undone[0] < froms[0]-1 {
		t.Fatalf("planned from %v, put in force from %d, undone at %v; want two plans, the second in force, the first undone once past %d", froms, got, undone, froms[0]-1)
	}
	if x.Joins() != got-1 {
		t.Errorf("the instance joins at %d; want %d", x.Joins(), got-1)
	}
}

// A join of an instance in another process cannot be undone: the undo
// retires it here and fails the run.
func TestUndoRemoteJoinFails(t *testing.T) {
	_, rt, _ := leadJob()
	x := rt.Retirement("keyed", 1)
	x.Absent()
	var failed error
	undo := livesPlan{joins: []lifeChange{{x: x, epoch: 9}}}.start(nil, func(err error) { failed = err })
	if x.Joins() != 9 || failed != nil {
		t.Fatalf("joins %d, failed %v; want 9 and none", x.Joins(), failed)
	}
	undo(12)
	if x.From() != 14 || failed == nil || !strings.Contains(failed.Error(), "never heard of them") {
		t.Errorf("retires from %d, failed %v; want 14 and the run failed", x.From(), failed)
	}
}
