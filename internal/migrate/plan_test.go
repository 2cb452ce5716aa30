package migrate

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/partition"
)

func owners(t *partition.Table) []int {
	out := make([]int, t.Groups())
	for kg := range out {
		out[kg] = t.Owner(partition.KeyGroup(kg))
	}
	return out
}

func table(t testing.TB, from uint64, n int, owner []int) *partition.Table {
	t.Helper()
	tb, err := partition.NewTable(from, n, owner)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// degree is the most moves any one instance sends or receives.
func degree(old, new *partition.Table) (delta, moved int) {
	out := map[int]int{}
	in := map[int]int{}
	for kg := 0; kg < old.Groups(); kg++ {
		a, b := old.Owner(partition.KeyGroup(kg)), new.Owner(partition.KeyGroup(kg))
		if a != b {
			out[a]++
			in[b]++
			moved++
		}
	}
	for _, d := range out {
		delta = max(delta, d)
	}
	for _, d := range in {
		delta = max(delta, d)
	}
	return delta, moved
}

// check applies the steps by hand and checks every invariant doc.go states
// that does not depend on the strategy.
func check(t *testing.T, old, new *partition.Table, steps []Step, gap uint64) {
	t.Helper()
	if gap == 0 {
		gap = 1
	}
	owner := owners(old)
	moved := make([]bool, old.Groups())
	for i, s := range steps {
		if len(s.Moves) == 0 {
			t.Fatalf("step %d moves nothing", i)
		}
		for _, m := range s.Moves {
			if moved[m.KeyGroup] {
				t.Fatalf("key group %d moves twice", m.KeyGroup)
			}
			moved[m.KeyGroup] = true
			if owner[m.KeyGroup] != m.From {
				t.Fatalf("step %d moves key group %d from %d; it is on %d", i, m.KeyGroup, m.From, owner[m.KeyGroup])
			}
			owner[m.KeyGroup] = m.To
		}
		n := max(old.Instances(), new.Instances())
		if i == len(steps)-1 {
			n = new.Instances()
		}
		if s.Table.Instances() != n || s.Table.From != new.From+uint64(i)*gap {
			t.Fatalf("step %d: %v, want %d instances from epoch %d", i, s.Table, n, new.From+uint64(i)*gap)
		}
		if !slices.Equal(owners(s.Table), owner) {
			t.Fatalf("step %d's table is not the moves applied so far", i)
		}
	}
	if !slices.Equal(owner, owners(new)) {
		t.Fatalf("the steps do not end at the new table")
	}
	for kg, m := range moved {
		if differs := old.Owner(partition.KeyGroup(kg)) != new.Owner(partition.KeyGroup(kg)); m != differs {
			t.Fatalf("key group %d: moved %v, owners differ %v", kg, m, differs)
		}
	}
}

func matching(t *testing.T, steps []Step, cap int) {
	t.Helper()
	for i, s := range steps {
		src, dst := map[int]bool{}, map[int]bool{}
		for _, m := range s.Moves {
			if src[m.From] || dst[m.To] {
				t.Fatalf("step %d is not a matching: %v", i, s.Moves)
			}
			src[m.From], dst[m.To] = true, true
		}
		if cap > 0 && len(s.Moves) > cap {
			t.Fatalf("step %d has %d moves, cap %d", i, len(s.Moves), cap)
		}
	}
}

func randomTable(r *rand.Rand, from uint64, n, k int) *partition.Table {
	if r.IntN(3) == 0 {
		t := partition.Contiguous(k, n)
		t.From = from
		return t
	}
	owner := make([]int, k)
	for kg := range owner {
		owner[kg] = r.IntN(n)
	}
	t, _ := partition.NewTable(from, n, owner)
	return t
}

func TestPlanProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 15))
	cases := 120
	if testing.Short() {
		cases = 30
	}
	for c := 0; c < cases; c++ {
		k := 1 + r.IntN(4096)
		if c%3 != 0 {
			k = 1 + r.IntN(300)
		}
		old := randomTable(r, 0, 1+r.IntN(16), k)
		new := randomTable(r, 10, 1+r.IntN(16), k)
		delta, moved := degree(old, new)
		gap := uint64(r.IntN(3))
		for _, s := range []Strategy{AllAtOnce, Fluid, Batched} {
			steps, err := Plan(old, new, s, Options{Gap: gap})
			if err != nil {
				t.Fatal(err)
			}
			check(t, old, new, steps, gap)
			want := map[Strategy]int{AllAtOnce: min(moved, 1), Fluid: moved, Batched: delta}[s]
			if len(steps) != want {
				t.Fatalf("case %d, %v: %d steps, want %d (%d moves, degree %d)", c, s, len(steps), want, moved, delta)
			}
			if s == Batched {
				matching(t, steps, 0)
			}
		}
		if moved == 0 {
			continue
		}
		m := 1 + r.IntN(moved)
		var sizes []int64
		if r.IntN(2) == 0 {
			sizes = make([]int64, k)
			for kg := range sizes {
				sizes[kg] = r.Int64N(1 << 20)
			}
		}
		steps, err := Plan(old, new, Batched, Options{MaxPerStep: m, Sizes: sizes})
		if err != nil {
			t.Fatal(err)
		}
		check(t, old, new, steps, 1)
		matching(t, steps, m)
		if want := max(delta, (moved+m-1)/m); len(steps) != want {
			t.Fatalf("case %d, cap %d: %d steps, want max(%d, ceil(%d/%d)) = %d", c, m, len(steps), delta, moved, m, want)
		}
		perPair(t, c, old, new, 1+r.IntN(64), r.IntN(8), sizes)
	}
}

// perPair checks a batched plan whose steps may hand up to g key groups
// between the same two instances, capped at m pairs per step (0: none).
func perPair(t *testing.T, c int, old, new *partition.Table, g, m int, sizes []int64) {
	t.Helper()
	steps, err := Plan(old, new, Batched, Options{PerPair: g, MaxPerStep: m, Sizes: sizes})
	if err != nil {
		t.Fatal(err)
	}
	check(t, old, new, steps, 1)
	type pair struct{ from, to int }
	count := map[pair]int{}
	for _, mv := range Moves(old, new) {
		count[pair{mv.From, mv.To}]++
	}
	out, in := map[int]int{}, map[int]int{}
	bundles, delta := 0, 0
	for p, n := range count {
		b := (n + g - 1) / g
		bundles += b
		out[p.from] += b
		in[p.to] += b
		delta = max(delta, out[p.from], in[p.to])
	}
	want := delta
	if m > 0 {
		want = max(delta, (bundles+m-1)/m)
	}
	if len(steps) != want {
		t.Fatalf("case %d, %d per pair, cap %d: %d steps, want %d", c, g, m, len(steps), want)
	}
	for i, s := range steps {
		to, from := map[int]int{}, map[int]int{}
		per := map[pair]int{}
		for _, mv := range s.Moves {
			if d, ok := to[mv.From]; ok && d != mv.To {
				t.Fatalf("step %d: instance %d sends to %d and %d", i, mv.From, d, mv.To)
			}
			if d, ok := from[mv.To]; ok && d != mv.From {
				t.Fatalf("step %d: instance %d receives from %d and %d", i, mv.To, d, mv.From)
			}
			to[mv.From], from[mv.To] = mv.To, mv.From
			per[pair{mv.From, mv.To}]++
		}
		if m > 0 && len(per) > m {
			t.Fatalf("step %d: %d pairs, cap %d", i, len(per), m)
		}
		for p, n := range per {
			if n > g {
				t.Fatalf("step %d: %d key groups from %d to %d, at most %d", i, n, p.from, p.to, g)
			}
		}
	}
}

func moveList(steps []Step) [][]Move {
	var out [][]Move
	for _, s := range steps {
		out = append(out, s.Moves)
	}
	return out
}

func TestTwoToFour(t *testing.T) {
	old, new := partition.Contiguous(8, 2), partition.Contiguous(8, 4)
	// Instance 0 owned 0-3 and keeps 0-1; instance 1 owned 4-7 and gets 2-3.
	want := []Move{{2, 0, 1}, {3, 0, 1}, {4, 1, 2}, {5, 1, 2}, {6, 1, 3}, {7, 1, 3}}
	if got := Moves(old, new); !slices.Equal(got, want) {
		t.Fatalf("moves %v, want %v", got, want)
	}
	all, _ := Plan(old, new, AllAtOnce, Options{})
	if len(all) != 1 || !slices.Equal(all[0].Moves, want) {
		t.Fatalf("all-at-once %v", moveList(all))
	}
	fluid, _ := Plan(old, new, Fluid, Options{})
	for i, s := range fluid {
		if len(s.Moves) != 1 || s.Moves[0] != want[i] {
			t.Fatalf("fluid step %d: %v", i, s.Moves)
		}
	}
	// Instance 1 sends four key groups: four steps, each a matching.
	batched, _ := Plan(old, new, Batched, Options{})
	check(t, old, new, batched, 1)
	matching(t, batched, 0)
	if len(batched) != 4 {
		t.Fatalf("batched %v, want 4 steps", moveList(batched))
	}
	// The first step already counts the new instances 2 and 3.
	if n := batched[0].Table.Instances(); n != 4 {
		t.Fatalf("first step over %d instances", n)
	}
}

func TestFourToTwo(t *testing.T) {
	old, new := partition.Contiguous(8, 4), partition.Contiguous(8, 2)
	want := []Move{{2, 1, 0}, {3, 1, 0}, {4, 2, 1}, {5, 2, 1}, {6, 3, 1}, {7, 3, 1}}
	if got := Moves(old, new); !slices.Equal(got, want) {
		t.Fatalf("moves %v, want %v", got, want)
	}
	steps, _ := Plan(old, new, Batched, Options{})
	check(t, old, new, steps, 1)
	matching(t, steps, 0)
	if len(steps) != 4 { // instance 1 receives four
		t.Fatalf("batched %v, want 4 steps", moveList(steps))
	}
	// Retiring instances 2 and 3 count until the last step.
	for i, s := range steps {
		if n := s.Table.Instances(); n != map[bool]int{true: 2, false: 4}[i == len(steps)-1] {
			t.Fatalf("step %d over %d instances", i, n)
		}
	}
}

// An instance may send one key group and receive another in the same
// step: 0 -> 1, 1 -> 2, 2 -> 0 is one batched step.
func TestRotationIsOneStep(t *testing.T) {
	old, new := table(t, 0, 3, []int{0, 1, 2}), table(t, 5, 3, []int{1, 2, 0})
	steps, err := Plan(old, new, Batched, Options{})
	if err != nil || len(steps) != 1 || len(steps[0].Moves) != 3 {
		t.Fatalf("%v %v", moveList(steps), err)
	}
}

// Four independent moves capped at two per step: two steps, and with sizes
// 10, 10, 1, 1 each step moves 11 bytes.
func TestBalancedBytes(t *testing.T) {
	old, new := table(t, 0, 8, []int{0, 1, 2, 3}), table(t, 1, 8, []int{4, 5, 6, 7})
	steps, err := Plan(old, new, Batched, Options{MaxPerStep: 2, Sizes: []int64{10, 10, 1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 {
		t.Fatalf("%d steps", len(steps))
	}
	for i, s := range steps {
		var b int64
		for _, m := range s.Moves {
			b += []int64{10, 10, 1, 1}[m.KeyGroup]
		}
		if len(s.Moves) != 2 || b != 11 {
			t.Fatalf("step %d: %v, %d bytes", i, s.Moves, b)
		}
	}
}

// Sizes never make the heaviest step heavier than the plan without them.
func TestBalanceNeverWorse(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 15))
	heaviest := func(steps []Step, sizes []int64) int64 {
		var h int64
		for _, s := range steps {
			var b int64
			for _, m := range s.Moves {
				b += sizes[m.KeyGroup]
			}
			h = max(h, b)
		}
		return h
	}
	for c := 0; c < 40; c++ {
		k := 1 + r.IntN(1024)
		old, new := randomTable(r, 0, 1+r.IntN(16), k), randomTable(r, 1, 1+r.IntN(16), k)
		sizes := make([]int64, k)
		for kg := range sizes {
			sizes[kg] = r.Int64N(1000) * r.Int64N(1000)
		}
		m := 1 + r.IntN(64)
		plain, _ := Plan(old, new, Batched, Options{MaxPerStep: m})
		even, err := Plan(old, new, Batched, Options{MaxPerStep: m, Sizes: sizes})
		if err != nil {
			t.Fatal(err)
		}
		check(t, old, new, even, 1)
		matching(t, even, m)
		if len(even) != len(plain) || heaviest(even, sizes) > heaviest(plain, sizes) {
			t.Fatalf("case %d: %d steps with sizes (heaviest %d), %d without (heaviest %d)",
				c, len(even), heaviest(even, sizes), len(plain), heaviest(plain, sizes))
		}
	}
}

func TestPlanErrors(t *testing.T) {
	a, b := partition.Contiguous(8, 2), partition.Contiguous(16, 4)
	for _, c := range []struct {
		old, new *partition.Table
		s        Strategy
		o        Options
		want     string
	}{
		{a, b, Batched, Options{}, "8 key groups and the new one 16"},
		{a, nil, Batched, Options{}, "both"},
		{a, a, Batched, Options{MaxPerStep: -1}, "at most -1 moves"},
		{a, a, Batched, Options{PerPair: -2}, "-2 key groups per pair"},
		{a, a, AllAtOnce, Options{MaxPerStep: 2}, "cannot cap"},
		{a, a, Batched, Options{Sizes: []int64{1}}, "sizes for 1 key groups"},
		{a, a, Batched, Options{Sizes: []int64{0, 0, 0, -1, 0, 0, 0, 0}}, "key group 3 has -1 bytes"},
		{a, a, Strategy(9), Options{}, "unknown"},
	} {
		if _, err := Plan(c.old, c.new, c.s, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v -> %v %v %+v: %v, want %q", c.old, c.new, c.s, c.o, err, c.want)
		}
	}
	if steps, err := Plan(a, a, Batched, Options{}); err != nil || steps != nil {
		t.Fatalf("nothing to move: %v %v", steps, err)
	}
}

func TestParseStrategy(t *testing.T) {
	for _, s := range []Strategy{Batched, AllAtOnce, Fluid} {
		if got, err := ParseStrategy(s.String()); err != nil || got != s {
			t.Fatalf("%v: %v %v", s, got, err)
		}
	}
	if _, err := ParseStrategy("restart"); err == nil {
		t.Fatal("restart is not a plan")
	}
}
