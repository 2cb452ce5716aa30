package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/trace"
)

// TestDiagnose runs weir diagnose at small sizes and checks that critical
// participation ranks the injected slow operator first among the
// operators, and the straggler first among the workers. The straggler is
// the instance the command computed from the key-group routing; the test
// checks with the job's own figures that it is the instance of score that
// took in the most records, and that the sink counted every record.
func TestDiagnose(t *testing.T) {
	const records = 1_000_000
	dir := t.TempDir()
	r := mustSucceed(t, "diagnose", "--json", "--records", fmt.Sprint(records), "--window", "100ms", "--trace-dir", dir)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines; want one per scenario:\n%s", len(lines), r.stdout)
	}
	want := map[string]struct{ group, injected string }{
		"slow-operator": {"operator", "enrich"},
		"straggler":     {"worker", "score#1"},
	}
	for _, l := range lines {
		var res diagResult
		if err := json.Unmarshal([]byte(l), &res); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		w, ok := want[res.Scenario]
		if !ok {
			t.Fatalf("unknown scenario %q", res.Scenario)
		}
		delete(want, res.Scenario)
		if res.Group != w.group || res.Injected != w.injected {
			t.Errorf("%s: injected %s %s; want %s %s", res.Scenario, res.Group, res.Injected, w.group, w.injected)
		}
		if res.Records != records {
			t.Errorf("%s: the sink counted %d records; want %d", res.Scenario, res.Records, records)
		}
		if res.Windows == 0 {
			t.Errorf("%s: no window with a critical path (%d without)", res.Scenario, res.Empty)
		}
		if res.CPFirst != w.injected {
			t.Errorf("%s: CP ranks %s first; want %s (rankings %+v)", res.Scenario, res.CPFirst, w.injected, res.Rankings[w.group])
		}
		if res.Scenario == "straggler" {
			most, n := "", int64(-1)
			for name, in := range res.RecordsIn {
				if strings.HasPrefix(name, "score#") && in > n {
					most, n = name, in
				}
			}
			if most != w.injected {
				t.Errorf("straggler: %s took in the most records of score (%v); want %s", most, res.RecordsIn, w.injected)
			}
		}
		t.Logf("%s: CP ranks %s first, busy time %s, useful time %s", res.Scenario, res.CPFirst, res.BusyFirst, res.Useful)
		checkEdges(t, filepath.Join(dir, res.Scenario+".trace"))
	}
	for s := range want {
		t.Errorf("no result for scenario %s", s)
	}
}

// TestDiagnoseRefuses checks that settings that make no sense are refused.
func TestDiagnoseRefuses(t *testing.T) {
	mustFail(t, []string{"diagnose", "--workers", "1"}, "--workers 1")
	mustFail(t, []string{"diagnose", "--skew", "1"}, "--skew 1")
	mustFail(t, []string{"diagnose", "--straggler", "2"}, "--straggler 2")
	mustFail(t, []string{"diagnose", "--window", "0s"}, "--window 0s")
	mustFail(t, []string{"diagnose", "--records", "0"}, "--records 0")
}

// checkEdges checks that in the one-process trace at path every message
// received before it was sent was sent right after a wait for space (the
// sender stamps such a send when it runs again), so that no critical path
// could have used the edge.
func checkEdges(t *testing.T, path string) {
	t.Helper()
	tr, err := trace.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ ch, seq uint64 }
	sends := map[key]int{}
	byWorker := map[uint32][]int{} // event indices of each worker, by time
	for i, e := range tr.Events {
		byWorker[e.Worker] = append(byWorker[e.Worker], i)
		if e.Kind == trace.Send {
			sends[key{e.Channel, e.Seq}] = i
		}
	}
	pos := map[int]int{} // event index -> place among its worker's
	for _, evs := range byWorker {
		slices.SortStableFunc(evs, func(a, b int) int {
			return cmp.Or(cmp.Compare(tr.Events[a].Start, tr.Events[b].Start), cmp.Compare(tr.Events[a].End, tr.Events[b].End))
		})
		for p, i := range evs {
			pos[i] = p
		}
	}
	edges, late := 0, 0
	for _, e := range tr.Events {
		s, ok := sends[key{e.Channel, e.Seq}]
		if e.Kind != trace.Recv || !ok {
			continue
		}
		edges++
		send := tr.Events[s]
		if e.Start >= send.End {
			continue
		}
		late++
		evs := byWorker[send.Worker]
		if p := pos[s]; p == 0 || tr.Events[evs[p-1]].Kind != trace.WaitCredit || tr.Events[evs[p-1]].End != send.Start {
			t.Errorf("%s: a message on channel %x (seq %d) received %v before it was sent, by a send that follows no wait for space",
				path, e.Channel, e.Seq, send.End-e.Start)
		}
	}
	t.Logf("%s: %d message edges, %d received before sent", filepath.Base(path), edges, late)
}
