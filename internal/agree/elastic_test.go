package agree

import (
	"strings"
	"testing"
)

// roundOf is round with a capacity: the keyed instances of the processes
// taking part.
func roundOf(k, procs, active int, rate float64) Round {
	r := round(k, procs, active, rate)
	r.Capacity = 2 * procs
	return r
}

// A count of up to 8 instances over 4 slots (2 each), of 1 ms a record
// read at 6000 a second (about 8 instances at 80 %), runs on 2 processes:
// decisions stay within their 4 instances, and once the decider holds
// all 4, Wanted asks for more and Need for all 4 processes (never more
// than take part before). A third process joins: its new sizer and the
// old one give the same digest from the first round the three take part
// in, and the same outcomes after; the 6 instances the join spread the
// key groups over are taken as they are, with no decision awaited.
func TestSizerCapacityAndJoiner(t *testing.T) {
	cfg := config()
	cfg.Processes = 4
	old, err := New(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	active, sawMore := 2, false
	for k := 1; k <= 6; k++ {
		o, err := old.Step(roundOf(k, 2, active, 6000))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case o.To > 4:
			t.Fatalf("round %d: %+v: more than the 4 instances of the processes taking part", k, o)
		case o.Skipped == "" && o.To < 4 && o.Need > 2:
			t.Errorf("round %d: %+v: more processes needed before the decider holds all their instances", k, o)
		case o.Skipped == "" && o.To == 4 && o.Wanted > 4:
			sawMore = true
			if want := (o.Wanted*4 + 7) / 8; o.Need != want {
				t.Errorf("round %d: %+v: need %d processes for %d instances; want %d", k, o, o.Need, o.Wanted, want)
			}
		}
		if o.Changed {
			active = o.To
		}
	}
	if !sawMore || active != 4 {
		t.Fatalf("the decider holds %d instances, wanted more: %v; want 4, and more processes", active, sawMore)
	}
	joiner, err := New(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	for k := 7; k <= 10; k++ {
		r := roundOf(k, 3, 4, 6000)
		if k >= 8 {
			r = roundOf(k, 3, 6, 6000) // the join's spread took force
		}
		a, err := old.Step(r)
		if err != nil {
			t.Fatal(err)
		}
		b, err := joiner.Step(r)
		if err != nil {
			t.Fatal(err)
		}
		if a.Digest != b.Digest || a.Skipped != b.Skipped || a.To != b.To || a.Need != b.Need {
			t.Fatalf("round %d: the old sizer %+v, the joiner's %+v; want the same", k, a, b)
		}
		switch {
		case k == 7 && !strings.Contains(a.Skipped, "first round"):
			t.Errorf("round 7: %+v; want the first round of the three", a)
		case k == 8 && !strings.Contains(a.Skipped, "without a decision"):
			t.Errorf("round 8: %+v; want the 6 instances taken as they are", a)
		case k == 8 && old.Current() != 6:
			t.Errorf("round 8: the decider holds %d instances; want the 6 in force", old.Current())
		}
	}
}

// Need counts the processes the first n instances are placed on
// (instance i on process i*Processes/planned), also when the planned
// instances do not divide evenly, and beyond the planned in the same
// proportion.
func TestSizerNeed(t *testing.T) {
	for _, c := range []struct{ planned, procs, n, want int }{
		{8, 4, 1, 1}, {8, 4, 2, 1}, {8, 4, 3, 2}, {8, 4, 8, 4}, {8, 4, 9, 5},
		{3, 2, 1, 1}, {3, 2, 2, 1}, {3, 2, 3, 2}, {3, 2, 4, 3}, {6, 3, 0, 1},
	} {
		cfg := config()
		cfg.Tasks[1].Max, cfg.Processes = c.planned, c.procs
		s, err := New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.need(c.n); got != c.want {
			t.Errorf("%d instances of %d planned over %d processes: need %d; want %d", c.n, c.planned, c.procs, got, c.want)
		}
	}
}
