package main

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// rescaleFigures are what the page's rescale control shows.
type rescaleFigures struct {
	State, Text, Answer string
	Owners              int
	Rows                []string
}

const readRescale = `(() => {
  const e = document.getElementById("rescale-status");
  return {State: e.dataset.state || "", Text: e.textContent, Answer: e.dataset.answer || "", Owners: Number(e.dataset.owners) || 0,
    Rows: [...document.querySelectorAll("#heatmap .heat-row")].map((r) => r.dataset.instance)};
})()`

func waitRescale(t *testing.T, b *browser, what string, cond func(rescaleFigures) bool) rescaleFigures {
	t.Helper()
	var f rescaleFigures
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		f = rescaleFigures{}
		b.eval(t, readRescale, &f)
		if cond(f) {
			return f
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; the rescale control shows %+v", what, f)
		}
	}
}

// keyedIn is the records each instance of the keyed chains took in, by
// "chain#instance", as the job's figures say, and the chains that own key
// groups.
func keyedIn(st weir.JobStats) (in map[string]int64, keyed []string) {
	in = map[string]int64{}
	for _, s := range st.Instances() {
		in[s.Operator+"#"+strconv.Itoa(s.Instance)] = s.RecordsIn
		if len(s.KeyGroups) > 0 && !slices.Contains(keyed, s.Operator) {
			keyed = append(keyed, s.Operator)
		}
	}
	return in, keyed
}

// clickRescale asks, with the rescale control of the page b shows
// (process 0's), a rescale of the job's keyed operators from the one
// instance they start on to both: the page says one instance owns key
// groups, then, the control clicked, shows the answer (the 64 of the 128
// key groups that change owner, in one step) and comes to show both
// instances owning key groups, with a heat-map row each; and the job's
// own figures say that process 1's instance of each keyed chain, which
// took in nothing before, takes in records after.
func clickRescale(t *testing.T, b *browser, jobs []*weir.Job) {
	t.Helper()
	waitRescale(t, b, "the control to show one instance owning key groups", func(f rescaleFigures) bool { return f.Owners == 1 && f.State == "idle" })
	before, _ := keyedIn(jobs[1].Stats())
	var ok bool
	b.eval(t, `(() => {
  document.getElementById("rescale-n").value = "2";
  document.getElementById("rescale-strategy").value = "all-at-once";
  document.getElementById("rescale-btn").click();
  return true;
})()`, &ok)
	f := waitRescale(t, b, "the answer", func(f rescaleFigures) bool { return f.Answer != "" || f.State == "refused" })
	var ans struct{ First, Last, Steps, Moves int }
	if err := json.Unmarshal([]byte(f.Answer), &ans); err != nil {
		t.Fatalf("the control shows %+v: %v", f, err)
	}
	moves := 0
	for kg := range 128 {
		if kg*1/128 != kg*2/128 { // partition.Contiguous's owners over 1, then 2 instances
			moves++
		}
	}
	if ans.Moves != moves || ans.Steps != 1 || ans.First != ans.Last {
		t.Errorf("the answer %+v; want %d moves in 1 step", ans, moves)
	}
	done := waitRescale(t, b, "both instances to own key groups", func(f rescaleFigures) bool {
		return f.State == "done" && f.Owners == 2 && len(f.Rows) >= 2
	})
	for _, p := range []string{"#0 · p0", "#1 · p1"} {
		if !slices.ContainsFunc(done.Rows, func(r string) bool { return strings.HasSuffix(r, p) }) {
			t.Errorf("the heat map's rows %q have none for %s", done.Rows, p)
		}
	}
	var after map[string]int64
	var keyed []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		after, keyed = keyedIn(jobs[1].Stats())
		grew := len(keyed) > 0
		for _, op := range keyed {
			grew = grew && after[op+"#1"] > before[op+"#1"]
		}
		if grew {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process 1's keyed instances took in %v before the rescale and %v a minute after (keyed chains %q)", before, after, keyed)
		}
	}
	for _, op := range keyed {
		if before[op+"#1"] != 0 {
			t.Errorf("%s's instance 1 took in %d records before the rescale, owning no key group", op, before[op+"#1"])
		}
	}
	t.Logf("rescale: %s; process 1's keyed instances took in %v, then %v", done.Text, before, after)
}
