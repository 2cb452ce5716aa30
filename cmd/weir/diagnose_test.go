package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestDiagnose runs weir diagnose at small sizes and checks that critical
// participation ranks the injected slow operator first among the
// operators, and the straggler first among the workers. The straggler is
// the instance the command computed from the key-group routing; the test
// checks with the job's own figures that it is the instance of score that
// took in the most records, and that the sink counted every record.
func TestDiagnose(t *testing.T) {
	const records = 1_000_000
	r := mustSucceed(t, "diagnose", "--json", "--records", fmt.Sprint(records), "--window", "100ms")
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
