package migrate

import (
	"testing"

	"github.com/weirstream/weir/internal/partition"
)

func tableOf(t *testing.T, from uint64, n int, owner ...int) *partition.Table {
	t.Helper()
	return table(t, from, n, owner)
}

// Lives from hand-made tables: an instance that owns key groups from the
// start takes part from the first epoch; one that gains its first at
// table e joins at e-1; one that loses its last at e retires from e+1;
// one that owns nothing takes no part.
func TestLives(t *testing.T) {
	tables := []*partition.Table{
		tableOf(t, 3, 4, 0, 0, 1, 1),
		tableOf(t, 7, 4, 0, 2, 1, 1),
		tableOf(t, 9, 4, 0, 2, 2, 1),
		tableOf(t, 12, 4, 0, 2, 2, 2),
	}
	got := Lives(tables, 5)
	want := []Life{{5, Never}, {5, 13}, {6, Never}, {Never, Never}}
	if len(got) != len(want) {
		t.Fatalf("Lives = %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("instance %d: %+v; want %+v", i, got[i], want[i])
		}
	}
}

// Lives of planned rescales: growing from 2 to 4 instances, the new ones
// join the epoch before the first step that gives them a key group and
// do not retire; shrinking back, the two leave after the step that takes
// their last, and the two that stay never retire. No instance that owns
// a key group in a table takes no part at that table's epoch.
func TestLivesOfPlans(t *testing.T) {
	const groups = 16
	for _, s := range []Strategy{AllAtOnce, Fluid, Batched} {
		two := partition.Contiguous(groups, 2)
		old := tableOf(t, 0, 4, owners(two)...)
		four := tableOf(t, 10, 4, owners(partition.Contiguous(groups, 4))...)
		steps, err := Plan(old, four, s, Options{Gap: 2})
		if err != nil {
			t.Fatal(err)
		}
		tables := []*partition.Table{old}
		for _, st := range steps {
			tables = append(tables, st.Table)
		}
		checkLives(t, s.String()+" up", tables, 9, []bool{false, false, false, false})
		back := tableOf(t, 100, 4, owners(two)...)
		down, err := Plan(tables[len(tables)-1], back, s, Options{Gap: 2})
		if err != nil {
			t.Fatal(err)
		}
		tables = tables[len(tables)-1:]
		for _, st := range down {
			tables = append(tables, st.Table)
		}
		checkLives(t, s.String()+" down", tables, 99, []bool{false, false, true, true})
	}
}

// checkLives verifies lives against the tables: every owner takes part at
// every epoch its table is in force and at the one before it gains, and
// whether each instance retires.
func checkLives(t *testing.T, name string, tables []*partition.Table, from uint64, retires []bool) {
	t.Helper()
	lives := Lives(tables, from)
	for k, tb := range tables {
		start := max(tb.From, from)
		for kg := range tb.Groups() {
			o := tb.Owner(partition.KeyGroup(kg))
			l := lives[o]
			if k > 0 && tables[k-1].Owner(partition.KeyGroup(kg)) != o && l.Join > start-1 {
				t.Errorf("%s: instance %d gains key group %d at %d but joins at %d", name, o, kg, start, l.Join)
			}
			if l.Join > start || l.Retire <= start+1 {
				t.Errorf("%s: instance %d owns key group %d from %d but lives %+v", name, o, kg, start, l)
			}
		}
	}
	for i, r := range retires {
		if (lives[i].Retire != Never) != r {
			t.Errorf("%s: instance %d lives %+v; want retiring %v", name, i, lives[i], r)
		}
	}
}
