package routing

import (
	"errors"
	"testing"

	"github.com/weirstream/weir/internal/partition"
)

func table(t *testing.T, from uint64, owner ...int) *partition.Table {
	t.Helper()
	tb, err := partition.NewTable(from, 4, owner)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestSchedule(t *testing.T) {
	first := table(t, 7, 0, 0, 1, 1)
	s := New(first)
	if got := s.At(0); got.From != 0 || !got.Equal(first) {
		t.Fatalf("At(0) = %v from %d; want the first table from 0", got, got.From)
	}
	if got := s.Enter(5); !got.Equal(first) {
		t.Fatalf("Enter(5) = %v", got)
	}
	// A table at or before an entered epoch is refused; a later one is
	// in force from its epoch on.
	if err := s.Add(table(t, 5, 0, 1, 2, 3)); !errors.Is(err, ErrTooLate) {
		t.Fatalf("Add at an entered epoch: %v; want ErrTooLate", err)
	}
	a, b := table(t, 8, 0, 1, 1, 1), table(t, 10, 0, 1, 2, 3)
	for _, tb := range []*partition.Table{a, b} {
		if err := s.Add(tb); err != nil {
			t.Fatal(err)
		}
	}
	for e, want := range map[uint64]*partition.Table{0: first, 7: first, 8: a, 9: a, 10: b, 1 << 40: b} {
		if got := s.At(e); !got.Equal(want) {
			t.Errorf("At(%d) = %v; want %v", e, got, want)
		}
	}
	// Announcements repeat: the same table again changes nothing.
	if err := s.Add(table(t, 8, 0, 1, 1, 1)); err != nil {
		t.Errorf("the same table again: %v", err)
	}
	if got := s.Tables(9); len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("Tables(9) = %v; want the tables from 8 and 10", got)
	}
	// A new plan from epoch 9 replaces the steps from 9 on.
	c := table(t, 9, 3, 3, 3, 3)
	if err := s.Add(c); err != nil {
		t.Fatal(err)
	}
	if got := s.At(12); got != c {
		t.Errorf("At(12) = %v; want the replacing table", got)
	}
	if got := s.Last(); got != c {
		t.Errorf("Last = %v; want the replacing table", got)
	}
	// A table of another shape is refused.
	other, _ := partition.NewTable(20, 2, []int{0, 1, 0, 1})
	if err := s.Add(other); err == nil {
		t.Error("a table over 2 instances was added to a schedule over 4")
	}
	// Restore starts from the table in force and keeps the later ones.
	r, err := Restore(s.Tables(8))
	if err != nil {
		t.Fatal(err)
	}
	for e, want := range map[uint64]*partition.Table{0: a, 8: a, 9: c, 100: c} {
		if got := r.At(e); !got.Equal(want) {
			t.Errorf("restored At(%d) = %v; want %v", e, got, want)
		}
	}
}

// A schedule of shares takes tables of other share counts over the same
// instances, and refuses what a routing schedule refuses otherwise.
func TestShares(t *testing.T) {
	two, _ := partition.NewTable(0, 4, []int{0, 1})
	s := NewShares(two)
	s.Enter(3)
	four, _ := partition.NewTable(5, 4, []int{0, 1, 2, 3})
	if err := s.Add(four); err != nil {
		t.Fatalf("4 shares after 2: %v", err)
	}
	one, _ := partition.NewTable(3, 4, []int{2})
	if err := s.Add(one); !errors.Is(err, ErrTooLate) {
		t.Errorf("a table at an entered epoch: %v; want ErrTooLate", err)
	}
	other, _ := partition.NewTable(9, 2, []int{0, 1})
	if err := s.Add(other); err == nil {
		t.Error("a table over 2 instances was added to a schedule of shares over 4")
	}
	r, err := RestoreShares(s.Tables(4))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.At(7); !got.Equal(four) {
		t.Errorf("restored At(7) = %v; want the 4 shares", got)
	}
	if _, err := Restore(s.Tables(4)); err == nil {
		t.Error("a routing schedule restored tables of 2 and 4 key groups")
	}
	if New(two).Add(four) == nil {
		t.Error("a routing schedule took a table of another key-group count")
	}
}

// AddAll adds the tables of several schedules all or none: one refused
// table (an epoch entered, another shape) leaves every schedule as it
// was; else every table is in force from its epoch.
func TestAddAll(t *testing.T) {
	first := table(t, 0, 0, 0, 1, 1)
	s, u := New(first), New(first)
	u.Enter(6)
	a, b, c := table(t, 6, 0, 1, 1, 1), table(t, 8, 0, 1, 2, 2), table(t, 7, 3, 3, 3, 3)
	other, err := partition.NewTable(9, 2, []int{0, 1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, adds := range [][]Addition{
		{{S: s, Tables: []*partition.Table{b}}, {S: u, Tables: []*partition.Table{a}}},
		{{S: s, Tables: []*partition.Table{c, b}}, {S: u, Tables: []*partition.Table{c, other}}},
	} {
		if err := AddAll(adds); err == nil {
			t.Fatalf("AddAll(%v) = nil; want a refusal", adds)
		}
		for _, x := range []*Schedule{s, u} {
			if got := x.Tables(0); len(got) != 1 {
				t.Fatalf("after a refused AddAll: %v", got)
			}
		}
	}
	if err := AddAll([]Addition{{S: s, Tables: []*partition.Table{c, b}}, {S: u, Tables: []*partition.Table{c}}, {S: s, Tables: []*partition.Table{b}}}); err != nil {
		t.Fatal(err)
	}
	for e, want := range map[uint64]*partition.Table{6: first, 7: c, 8: b, 100: b} {
		if got := s.At(e); !got.Equal(want) {
			t.Errorf("s.At(%d) = %v; want %v", e, got, want)
		}
	}
	for e, want := range map[uint64]*partition.Table{6: first, 7: c, 100: c} {
		if got := u.At(e); !got.Equal(want) {
			t.Errorf("u.At(%d) = %v; want %v", e, got, want)
		}
	}
}

// A process that joins a running job at epoch 12 gets the share tables in
// force from 7 and from 13: its schedule keeps 7, by which the other
// processes' notes name the first table, and Restore's puts it at 0.
func TestJoinSharesKeepsFrom(t *testing.T) {
	seven, _ := partition.NewTable(7, 4, []int{0, 1})
	thirteen, _ := partition.NewTable(13, 4, []int{0, 1, 2})
	s, err := JoinShares([]*partition.Table{seven, thirteen})
	if err != nil {
		t.Fatal(err)
	}
	for e, want := range map[uint64]uint64{0: 7, 7: 7, 12: 7, 13: 13, 20: 13} {
		if got := s.At(e).From; got != want {
			t.Errorf("At(%d) is the table from %d; want %d", e, got, want)
		}
	}
	r, err := RestoreShares([]*partition.Table{seven, thirteen})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.At(12).From; got != 0 {
		t.Errorf("RestoreShares: At(12) is the table from %d; want 0", got)
	}
}

// AddAllJoining needs each table at least two epochs after the last one
// a sender entered (its joining instances join the epoch before it, and
// a sender may be about to end the one it is in), and sets the joins
// with the locks held, so that no sender enters an epoch meanwhile, and
// before the tables take force. A refused addition sets no join.
func TestAddAllJoining(t *testing.T) {
	first := table(t, 0, 0, 0, 1, 1)
	s, u := New(first), New(first)
	s.Enter(5)
	joins := 0
	join := func() {
		joins++
		for _, x := range []*Schedule{s, u} {
			if x.mu.TryLock() {
				x.mu.Unlock()
				t.Error("the joins are set while a sender may enter an epoch")
			}
		}
		if len(s.Tables(0)) != 1 || len(u.Tables(0)) != 1 {
			t.Error("the tables take force before the joins")
		}
	}
	late := []Addition{{S: u, Tables: []*partition.Table{table(t, 8, 1, 1, 1, 1)}}, {S: s, Tables: []*partition.Table{table(t, 6, 1, 1, 1, 1)}}}
	if err := AddAllJoining(late, join); !errors.Is(err, ErrTooLate) || joins != 0 {
		t.Fatalf("a table from epoch 6, epoch 5 entered: %v, %d joins set; want too late and none", err, joins)
	}
	if len(u.Tables(0)) != 1 {
		t.Fatalf("after a refused AddAllJoining: %v", u.Tables(0))
	}
	ok := []Addition{{S: u, Tables: []*partition.Table{table(t, 8, 1, 1, 1, 1)}}, {S: s, Tables: []*partition.Table{table(t, 7, 1, 1, 1, 1)}}}
	if err := AddAllJoining(ok, join); err != nil || joins != 1 {
		t.Fatalf("a table from epoch 7, epoch 5 entered: %v, %d joins set; want it added and one", err, joins)
	}
	if s.At(7).Owner(0) != 1 || u.At(8).Owner(0) != 1 || u.At(7).Owner(0) != 0 {
		t.Errorf("tables %v and %v; want the additions in force", s.Tables(0), u.Tables(0))
	}
}
