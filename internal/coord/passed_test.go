package coord_test

import (
	"math"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/coord"
)

// A process whose tasks all wait to join or have ended writes its part of
// a checkpoint that has passed, from the ended tasks' final state alone;
// while a live task reports to a checkpoint, Passed does nothing for it,
// and a task that joins from a later checkpoint does not hold back the
// parts before it.
func TestPassedWritesIdlePart(t *testing.T) {
	c, err := coord.New(coord.Config{Self: 1, Processes: 2, Every: 2, Keep: 1, KeyGroups: 4})
	if err != nil {
		t.Fatal(err)
	}
	writes := func() string { return partWrites(c) }
	written := func(n uint64) { answerWrite(t, c, n) }
	mustStep(t, c, coord.Join{Task: 0})
	mustStep(t, c, coord.Passed{N: 2})
	if got := writes(); got != "" {
		t.Fatalf("part 2 written (%s) while task 0 lives and has not reported", got)
	}
	mustStep(t, c, coord.Finish{Task: 0, State: []checkpoint.StateBlob{{Operator: "a", Data: []byte("final")}}})
	mustStep(t, c, coord.Passed{N: 4})
	if got := writes(); !strings.Contains(got, "write 4 ") || !strings.Contains(got, "a:0=final") {
		t.Fatalf("part 4 = %q; want it written with task 0's final state", got)
	}
	written(4)
	mustStep(t, c, coord.Passed{N: 4})
	mustStep(t, c, coord.Passed{N: 2})
	if got := writes(); got != "" {
		t.Fatalf("a part written again or out of order: %s", got)
	}
	mustStep(t, c, coord.Join{Task: 1, From: 8})
	mustStep(t, c, coord.Passed{N: 6})
	if got := writes(); !strings.Contains(got, "write 6 ") {
		t.Fatalf("part 6 = %q; want it written: task 1 joins from 8", got)
	}
	written(6)
	mustStep(t, c, coord.Passed{N: 8})
	if got := writes(); got != "" {
		t.Fatalf("part 8 written (%s) before task 1, which joined from 8, reported", got)
	}
	if got := c.FirstLive(); got != 8 {
		t.Fatalf("FirstLive() = %d; want 8, task 1's", got)
	}
	// Task 1's join is withdrawn (it never started): part 8, passed
	// again, waits for it no longer, and task 0's final state stays.
	mustStep(t, c, coord.Withdraw{Task: 1})
	mustStep(t, c, coord.Passed{N: 8})
	if got := writes(); !strings.Contains(got, "write 8 ") || !strings.Contains(got, "a:0=final") {
		t.Fatalf("part 8 = %q; want it written once task 1's join was withdrawn", got)
	}
	if got := c.FirstLive(); got != math.MaxUint64 {
		t.Errorf("FirstLive() = %d with no live task; want MaxUint64", got)
	}
}
