package report

import (
	"slices"
	"strings"
	"testing"
)

func TestReportPlanCoversEverySuite(t *testing.T) {
	for _, quick := range []bool{false, true} {
		plan := Plan(quick)
		var suites []Suite
		for _, r := range plan {
			if !slices.Contains(suites, r.Suite) {
				suites = append(suites, r.Suite)
			}
			if !strings.HasPrefix(r.Command(), "weir bench ") && !strings.HasPrefix(r.Command(), "weir launch -n 2 -- bench ") {
				t.Errorf("Plan(%v) runs %q, which is no bench", quick, r.Command())
			}
		}
		if !slices.Equal(suites, Suites) {
			t.Errorf("Plan(%v) runs suites %v; want %v", quick, suites, Suites)
		}
	}
	want := []string{
		"weir bench nexmark --query all --events 1000000 --workers 1 --baseline",
		"weir bench nexmark --query all --events 1000000 --workers 2 --baseline",
		"weir launch -n 2 -- bench ysb --events 5000000 --runs 3 --interval 10ms --workers 1",
		"weir bench skew --simulate --partitions 64 --epoch-size 200000",
	}
	var got []string
	for _, r := range Plan(false) {
		got = append(got, r.Command())
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("the full plan lacks %q; it runs:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

func TestReportQuote(t *testing.T) {
	r := Run{Args: []string{"bench", "x", "--out", "a b.csv", "--s", "it's", "--empty", ""}}
	if got, want := r.Command(), `weir bench x --out 'a b.csv' --s 'it'\''s' --empty ''`; got != want {
		t.Errorf("Command() = %s; want %s", got, want)
	}
}

func TestReportMachineParsing(t *testing.T) {
	cpuinfo := "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n"
	if got := CPUModel(cpuinfo); got != "AMD EPYC 7B13" {
		t.Errorf("CPUModel = %q", got)
	}
	if got := CPUModel("processor : 0\n"); got != "unknown" {
		t.Errorf("CPUModel without a model = %q; want unknown", got)
	}
	if got := MemTotal("MemFree:  10 kB\nMemTotal:       24608316 kB\n"); got != 24608316*1024 {
		t.Errorf("MemTotal = %d", got)
	}
	if got := MemTotal("nothing\n"); got != 0 {
		t.Errorf("MemTotal of nothing = %d", got)
	}
	if got := LoadAverage("13.03 11.47 6.34 3/812 4242\n"); got != "13.03 11.47 6.34" {
		t.Errorf("LoadAverage = %q", got)
	}
}
