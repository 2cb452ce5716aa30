package partition

import (
	"testing"
	"time"
)

func TestElastic(t *testing.T) {
	const iv = 100 * time.Millisecond
	type step struct {
		processing time.Duration
		interval   time.Duration
		tasks      int
		changed    bool
	}
	for _, tc := range []struct {
		name  string
		e     *Elastic
		steps []step
	}{
		{"starts at max and cannot grow", NewElastic(4), []step{
			{95 * time.Millisecond, iv, 4, false},
		}},
		{"down after patience", NewElastic(4), []step{
			{10 * time.Millisecond, iv, 4, false},
			{10 * time.Millisecond, iv, 4, false},
			{10 * time.Millisecond, iv, 3, true},
			{10 * time.Millisecond, iv, 3, false},
			{10 * time.Millisecond, iv, 3, false},
			{10 * time.Millisecond, iv, 2, true},
		}},
		{"the band in between resets the streak", NewElastic(4), []step{
			{10 * time.Millisecond, iv, 4, false},
			{10 * time.Millisecond, iv, 4, false},
			{50 * time.Millisecond, iv, 4, false}, // hysteresis: no change
			{10 * time.Millisecond, iv, 4, false},
			{10 * time.Millisecond, iv, 4, false},
			{10 * time.Millisecond, iv, 3, true},
		}},
		{"up at once, bounded by max", NewElastic(3), []step{
			{0, iv, 3, false},
			{0, iv, 3, false},
			{0, iv, 2, true},
			{0, iv, 2, false},
			{95 * time.Millisecond, iv, 3, true},
			{200 * time.Millisecond, iv, 3, false},
		}},
		{"an overload resets the streak", NewElastic(5), []step{
			{0, iv, 5, false},
			{0, iv, 5, false},
			{0, iv, 4, true},
			{0, iv, 4, false},
			{0, iv, 4, false},
			{time.Second, iv, 5, true},
			{0, iv, 5, false},
			{0, iv, 5, false},
			{0, iv, 4, true},
		}},
		{"never below one", NewElastic(1), []step{
			{0, iv, 1, false}, {0, iv, 1, false}, {0, iv, 1, false},
			{0, iv, 1, false}, {0, iv, 1, false}, {0, iv, 1, false},
		}},
		{"the thresholds are strict", NewElastic(2), []step{
			{90 * time.Millisecond, iv, 2, false}, // not above Up
			{30 * time.Millisecond, iv, 2, false}, // not under Down
			{30 * time.Millisecond, iv, 2, false},
			{30 * time.Millisecond, iv, 2, false},
		}},
		{"no interval, no change", NewElastic(2), []step{
			{0, iv, 2, false},
			{0, iv, 2, false},
			{time.Second, 0, 2, false},
			{0, -iv, 2, false},
			{0, iv, 1, true}, // the streak survives epochs without interval
		}},
		{"zero value uses the defaults", &Elastic{Max: 2}, []step{
			{0, iv, 2, false},
			{0, iv, 2, false},
			{0, iv, 1, true},
			{91 * time.Millisecond, iv, 2, true},
		}},
		{"own thresholds", &Elastic{Max: 3, Up: 0.5, Down: 0.1, Patience: 1}, []step{
			{60 * time.Millisecond, iv, 3, false},
			{5 * time.Millisecond, iv, 2, true},
			{5 * time.Millisecond, iv, 1, true},
			{60 * time.Millisecond, iv, 2, true},
		}},
	} {
		changes := 0
		for i, s := range tc.steps {
			tasks, changed := tc.e.Observe(s.processing, s.interval)
			if tasks != s.tasks || changed != s.changed {
				t.Fatalf("%s: step %d: Observe(%v, %v) = %d, %v; want %d, %v", tc.name, i, s.processing, s.interval, tasks, changed, s.tasks, s.changed)
			}
			if got := tc.e.Tasks(); got != tasks {
				t.Fatalf("%s: step %d: Tasks() = %d; want %d", tc.name, i, got, tasks)
			}
			if changed {
				changes++
			}
		}
		if tc.e.Changes() != changes {
			t.Errorf("%s: Changes() = %d; want %d", tc.name, tc.e.Changes(), changes)
		}
	}
}

func TestElasticNewDefaults(t *testing.T) {
	e := NewElastic(8)
	if e.Max != 8 || e.Up != 0.9 || e.Down != 0.3 || e.Patience != 3 || e.Tasks() != 8 || e.Changes() != 0 {
		t.Errorf("NewElastic(8) = %+v, Tasks %d; want Max 8, Up 0.9, Down 0.3, Patience 3, Tasks 8", *e, e.Tasks())
	}
}

// Resize starts the count again at the new ceiling, and counts a change
// only when the count moves.
func TestElasticResize(t *testing.T) {
	e := NewElastic(4)
	for range 6 {
		e.Observe(time.Millisecond, time.Second) // idle: down to 1 in time
	}
	if e.Tasks() != 2 {
		t.Fatalf("after 6 idle epochs: %d tasks; want 2", e.Tasks())
	}
	if n, changed := e.Resize(6); n != 6 || !changed || e.Tasks() != 6 {
		t.Errorf("Resize(6) = %d, %v; Tasks %d; want 6, true", n, changed, e.Tasks())
	}
	if n, changed := e.Resize(6); n != 6 || changed {
		t.Errorf("Resize(6) again = %d, %v; want 6, false", n, changed)
	}
	if _, changed := e.Observe(2*time.Second, time.Second); changed || e.Tasks() != 6 {
		t.Errorf("overloaded at the ceiling: %d tasks, changed %v; want 6 unchanged", e.Tasks(), changed)
	}
	if n, _ := e.Resize(1); n != 1 || e.Tasks() != 1 {
		t.Errorf("Resize(1) = %d; want 1", n)
	}
}
