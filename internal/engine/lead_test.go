package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
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

// funcJoiner is a joiner that counts what it is asked, and joins by f.
type funcJoiner struct {
	f                    func()
	announced, withdrawn *int
}

func (j funcJoiner) announce() { *j.announced++ }
func (j funcJoiner) join()     { j.f() }
func (j funcJoiner) withdraw() { *j.withdrawn++ }

// A reconfiguration that starts instances sets their joins only while
// the process has not entered the epoch before its first step, with the
// schedules' locks held: a plan whose senders go on past it meanwhile
// sets none, and the plan made again from a later epoch sets its own,
// once. A plan whose tables are refused under the lock withdraws the
// first checkpoints it announced.
func TestAddStartingJoinsOnlyInTime(t *testing.T) {
	j, rt, s := leadJob()
	s.Enter(5)
	x := rt.Retirement("keyed", 1)
	x.Absent()
	var froms, joined []uint64
	var announced, withdrawn int
	got, err := j.addStarting(rt, func(from uint64) ([]routing.Addition, error) {
		froms = append(froms, from)
		if len(froms) == 1 {
			s.Enter(from - 1) // the senders go on past from-2 meanwhile
		}
		return []routing.Addition{{S: s, Tables: []*partition.Table{moveAll(t, from)}}}, nil
	}, funcJoiner{func() {
		from := froms[len(froms)-1]
		if s.At(from).Owner(0) != 0 {
			t.Errorf("the tables from %d are in force before the joins", from)
		}
		joined = append(joined, from)
		x.Join(from - 1)
	}, &announced, &withdrawn})
	if err != nil {
		t.Fatal(err)
	}
	if len(froms) != 2 || got != froms[1] || len(joined) != 1 || joined[0] != got || announced != 1 || withdrawn != 0 {
		t.Fatalf("planned from %v, put in force from %d, joined at %v, %d announced and %d withdrawn; want two plans, the second in force, joined and announced", froms, got, joined, announced, withdrawn)
	}
	if x.Joins() != got-1 || s.At(got).Owner(0) != 1 {
		t.Errorf("the instance joins at %d, key group 0 goes to %d from %d; want %d and 1", x.Joins(), s.At(got).Owner(0), got, got-1)
	}

	// Tables of another shape are refused under the lock, after the
	// announcement.
	s.Enter(got)
	bad, err := partition.NewTable(got+10, 3, []int{0, 1, 2, 0, 1, 2, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.addStarting(rt, func(uint64) ([]routing.Addition, error) {
		return []routing.Addition{{S: s, Tables: []*partition.Table{bad}}}, nil
	}, funcJoiner{func() { t.Error("joins set for refused tables") }, &announced, &withdrawn}); err == nil {
		t.Fatal("tables of another shape added")
	}
	if announced != 2 || withdrawn != 1 {
		t.Errorf("%d announced, %d withdrawn; want the refused plan's withdrawn", announced, withdrawn)
	}
}

// A join set once a marker of its epoch, or a later one, came from
// another process may have missed that marker: missedRemote says so for
// a local instance, and not for a join after every such marker.
func TestMissedRemoteMarker(t *testing.T) {
	_, rt, _ := leadJob()
	in := rt.NewInbox("keyed", 0, 4)
	if err := in.Sender(0).MarkRemote(progress.Marker{Epoch: 9}); err != nil {
		t.Fatal(err)
	}
	x := rt.Retirement("keyed", 1)
	for _, c := range []struct {
		epoch uint64
		local bool
		late  bool
	}{{9, true, true}, {12, true, false}, {9, false, false}} {
		err := livesPlan{joins: []lifeChange{{x: x, epoch: c.epoch, local: c.local}}}.missedRemote(rt)
		if (err != nil) != c.late {
			t.Errorf("join at %d (local %v) after a remote marker of 9: %v; want late %v", c.epoch, c.local, err, c.late)
		}
	}
}
