package coord_test

import (
	"fmt"
	"testing"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/coord"
	"github.com/weirstream/weir/internal/progress"
)

func mustStep(t *testing.T, c *coord.Coordinator, e coord.Event) {
	t.Helper()
	if err := c.Step(e); err != nil {
		t.Fatal(err)
	}
}

func render(as []coord.Action) string { return fmt.Sprint(as) }

// Ready hands over the same actions until Advance; what steps add in
// between stays for the next Ready, as when a caller answers a request
// while it goes through a Ready's actions.
func TestReadyUntilAdvance(t *testing.T) {
	c, err := coord.New(coord.Config{Processes: 1, Every: 2, Keep: 1, KeyGroups: 4})
	if err != nil {
		t.Fatal(err)
	}
	if c.HasReady() || len(c.Ready()) != 0 {
		t.Fatal("a new coordinator has actions")
	}
	mustStep(t, c, coord.Join{Task: 0})
	mustStep(t, c, coord.Report{Task: 0, N: 2, State: []checkpoint.StateBlob{{Operator: "a", Data: []byte("x")}}})
	first := c.Ready()
	if got, again := render(first), render(c.Ready()); got != "[write 2 epoch=2 process=0/1 key_groups=4 state=[a:0=x] sources=[]]" || again != got {
		t.Fatalf("Ready = %s, then %s", got, again)
	}
	if c.HasReady() {
		t.Error("HasReady after Ready handed everything over")
	}
	mustStep(t, c, coord.PartWritten{N: 2})
	if !c.HasReady() {
		t.Error("no HasReady after a step that adds an action")
	}
	c.Advance()
	if got := render(c.Ready()); got != "[check-complete 2 processes=1]" {
		t.Fatalf("after Advance, Ready = %s; want the check the answer asked for", got)
	}
	mustStep(t, c, coord.CompleteChecked{N: 2, Complete: true})
	c.Advance()
	if got := render(c.Ready()); got != "[completed 2 commit 2 prune keep=1]" {
		t.Fatalf("Ready = %s", got)
	}
	c.Advance()
	if c.HasReady() || !c.Idle() {
		t.Errorf("HasReady %v, Idle %v once everything is done", c.HasReady(), c.Idle())
	}
}

// Due takes checkpoint n at the first marker at or after epoch n, the
// later one when a marker passes two boundaries, none at a final marker.
func TestDue(t *testing.T) {
	cases := []struct {
		every, last, epoch uint64
		final              bool
		n                  uint64
		ok                 bool
	}{
		{2, 0, 1, false, 0, false},
		{2, 0, 2, false, 2, true},
		{2, 0, 3, false, 2, true},
		{2, 2, 3, false, 0, false},
		{2, 2, 7, false, 6, true},
		{2, 2, 8, true, 0, false},
		{3, 4, 6, false, 6, true},
		{1, 0, 0, false, 0, false},
		{0, 0, 5, false, 0, false},
	}
	for _, c := range cases {
		n, ok := coord.Due(c.every, c.last, progress.Marker{Epoch: progress.Epoch(c.epoch), Final: c.final})
		if n != c.n || ok != c.ok {
			t.Errorf("Due(every %d, last %d, epoch %d final %v) = %d, %v; want %d, %v", c.every, c.last, c.epoch, c.final, n, ok, c.n, c.ok)
		}
	}
}
