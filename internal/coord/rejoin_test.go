package coord_test

import (
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/coord"
)

// A task that ends while the run goes on and joins again from
// checkpoint 6: the parts before 6 do not wait for it and hold its
// final state; the parts from 6 wait for it and hold what it reports,
// not its old final state; when it ends again, its new final state
// replaces the old one.
func TestTaskJoinsAgain(t *testing.T) {
	c, err := coord.New(coord.Config{Processes: 1, Every: 2, Keep: 1, KeyGroups: 4})
	if err != nil {
		t.Fatal(err)
	}
	blob := func(op, data string) []checkpoint.StateBlob {
		return []checkpoint.StateBlob{{Operator: op, Data: []byte(data)}}
	}
	writes := func() string { return partWrites(c) }
	answer := func(n uint64) { answerWrite(t, c, n) }
	mustStep(t, c, coord.Join{Task: 0})
	mustStep(t, c, coord.Join{Task: 1})
	mustStep(t, c, coord.Report{Task: 0, N: 2, State: blob("a", "0@2")})
	mustStep(t, c, coord.Finish{Task: 1, State: blob("b", "old")})
	if got := writes(); !strings.Contains(got, "write 2 ") || !strings.Contains(got, "a:0=0@2 b:0=old") {
		t.Fatalf("part 2 = %s; want task 0's report and task 1's final state", got)
	}
	answer(2)
	mustStep(t, c, coord.Join{Task: 1, From: 6})
	mustStep(t, c, coord.Report{Task: 0, N: 4, State: blob("a", "0@4")})
	if got := writes(); !strings.Contains(got, "write 4 ") || !strings.Contains(got, "a:0=0@4 b:0=old") {
		t.Fatalf("part 4 = %q; want it without waiting for task 1, with its final state", got)
	}
	answer(4)
	mustStep(t, c, coord.Report{Task: 0, N: 6, State: blob("a", "0@6")})
	if got := writes(); got != "" {
		t.Fatalf("part 6 was written (%s) before task 1, which joined from 6, reported", got)
	}
	mustStep(t, c, coord.Report{Task: 1, N: 6, State: blob("c", "1@6")})
	got := writes()
	if !strings.Contains(got, "write 6 ") || !strings.Contains(got, "a:0=0@6 c:0=1@6]") {
		t.Fatalf("part 6 = %q; want both reports and not task 1's old final state", got)
	}
	answer(6)
	mustStep(t, c, coord.Finish{Task: 1, State: blob("c", "new")})
	mustStep(t, c, coord.Report{Task: 0, N: 8, State: blob("a", "0@8")})
	if got := writes(); !strings.Contains(got, "a:0=0@8 c:0=new]") {
		t.Fatalf("part 8 = %q; want task 1's new final state only", got)
	}
}

// partWrites renders the parts c asks to write, and advances it.
func partWrites(c *coord.Coordinator) string {
	var w []string
	for _, a := range c.Ready() {
		if s := render([]coord.Action{a}); strings.HasPrefix(s, "[write") {
			w = append(w, s)
		}
	}
	c.Advance()
	return strings.Join(w, " ")
}

// answerWrite answers the write of part n, and the check that finds n
// complete.
func answerWrite(t *testing.T, c *coord.Coordinator, n uint64) {
	t.Helper()
	mustStep(t, c, coord.PartWritten{N: n})
	c.Advance()
	mustStep(t, c, coord.CompleteChecked{N: n, Complete: true})
	c.Advance()
}
