package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// A small simulation prints one line per rate step, steady run, the
// placement gaps and each rescale placed: every step settles in at most
// three decisions inside the band, the steady runs change nothing, the
// heuristic is within 5 % of the least cost and moves less state than
// balancing alone.
func TestBenchAutoscaleSimulate(t *testing.T) {
	r := mustSucceed(t, "bench", "autoscale", "--simulate", "--rates", "1e6,6e6,2e6", "--key-groups", "256", "--s", "0.2",
		"--steady-intervals", "300", "--problems", "40", "--placement", "128:4:5")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3+3+1+1 {
		t.Fatalf("%d lines; want 8:\n%s", len(lines), r.stdout)
	}
	for _, l := range lines[:3] {
		m := oneJSON(t, l)
		if number(t, m, "steps") > 3 || m["in_band"] != true || m["feasible"] != true {
			t.Errorf("rate step %s: want at most 3 decisions, in the band, feasible", l)
		}
	}
	for _, l := range lines[3:6] {
		if m := oneJSON(t, l); number(t, m, "changes") != 0 {
			t.Errorf("steady run %s: want no change", l)
		}
	}
	if m := oneJSON(t, lines[6]); m["placement"] != "exact" || number(t, m, "worst_gap") > 0.05 || number(t, m, "solved") < 30 {
		t.Errorf("placement gaps %s", lines[6])
	}
	m := oneJSON(t, lines[7])
	if m["placement"] != "rescale" || number(t, m, "imbalance") > 1.1 || number(t, m, "moved_share") >= number(t, m, "moved_share_without_move_cost") {
		t.Errorf("rescale placed %s", lines[7])
	}
}

// The live experiment, short: a count of 2 ms a record read at 300 and
// then 1500 records a second, sized from one instance, takes at most
// three decisions a step and ends each in the band the sweep of fixed
// parallelisms gives; the steady run changes nothing; the counts are the
// plain count's.
func TestBenchAutoscaleLive(t *testing.T) {
	r := mustSucceed(t, "bench", "autoscale", "--rates", "300,1500", "--step", "12s", "--steady", "4s", "--sweep", "2s", "--max-workers", "6")
	text := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(text) != 3 {
		t.Fatalf("%d lines; want 3:\n%s", len(text), r.stdout)
	}
	for i, l := range text[:2] {
		m := oneJSON(t, l)
		if m["checked"] != true || m["in_band"] != true || number(t, m, "steps") > 3 || number(t, m, "optimal") < 1 {
			t.Errorf("step %d: %s", i, l)
		}
		if i == 1 && number(t, m, "final") < 2 {
			t.Errorf("at 1500 records a second of 2 ms each the count stayed at %v instances: %s", m["final"], l)
		}
	}
	if m := oneJSON(t, text[2]); number(t, m, "changes") != 0 || m["checked"] != true {
		t.Errorf("steady: %s", text[2])
	}
}

// The live experiment on Nexmark's q8, short: its persons and auctions
// per person and window, 2 ms each, sized from one instance at 2000 and
// then 7000 events a second (8 % of them folded): the second step wants
// two instances (the hot seller's auctions on one, the rest on the
// other), the job gets there in at most three decisions, each step ends
// in its band, and the result is the plain loop's.
func TestBenchAutoscaleLiveNexmark(t *testing.T) {
	r := mustSucceed(t, "bench", "autoscale", "--query", "q8", "--rates", "2000,7000", "--step", "12s", "--steady", "0s", "--sweep", "3s", "--max-workers", "3")
	text := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(text) != 3 {
		t.Fatalf("%d lines; want 3:\n%s", len(text), r.stdout)
	}
	for i, l := range text[:2] {
		m := oneJSON(t, l)
		if m["query"] != "q8" || m["checked"] != true || m["in_band"] != true || number(t, m, "steps") > 3 || number(t, m, "optimal") < 1 {
			t.Errorf("step %d: %s", i, l)
		}
		if i == 1 && number(t, m, "final") < 2 {
			t.Errorf("at 7000 events a second q8 stayed at %v instances: %s", m["final"], l)
		}
	}
	mustFail(t, []string{"bench", "autoscale", "--query", "q7"}, "--query")
}

func TestBenchAutoscaleRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--service", "0s"}, "--service"},
		{[]string{"--start-workers", "20"}, "--max-workers"},
		{[]string{"--step", "1s"}, "--step"},
		{[]string{"--strategy", "sideways"}, "sideways"},
		{[]string{"--per-pair", "0"}, "--per-pair"},
		{[]string{"--keys", "0"}, "--keys"},
		{[]string{"--simulate", "--rates", "1e6,x"}, "--rates"},
		{[]string{"--simulate", "--rates", "-5"}, "--rates"},
		{[]string{"--simulate", "--placement", "128:4"}, "--placement"},
		{[]string{"--simulate", "--placement", "128:400:5"}, "--placement"},
		{[]string{"--simulate", "--placement", "100000000:1:1"}, "--placement"},
		{[]string{"--simulate", "--rates", "1e30"}, "--rates"},
		{[]string{"--simulate", "--target-utilization", "0"}, "target utilization"},
		{[]string{"--simulate", "--utilization-boundary", "0.9"}, "boundary"},
		{[]string{"--simulate", "--activation", "0"}, "activation"},
		{[]string{"--simulate", "--key-groups", "0"}, "--key-groups"},
		{[]string{"--simulate", "--noise", "1"}, "noise"},
		{[]string{"--simulate", "--policy-interval", "0s"}, "--policy-interval"},
	} {
		mustFail(t, append([]string{"bench", "autoscale"}, c.args...), c.want)
	}
}

// A word count that sizes itself (--autoscale, from one worker up to
// two a process) writes the reference counts, in one process and in two;
// the flags that make no sense are refused.
func TestRunAutoscale(t *testing.T) {
	dir := t.TempDir()
	var text strings.Builder
	for i := range 40_000 {
		fmt.Fprintf(&text, "w%d v%d the\n", i%997, i%31)
	}
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "words.csv")
	writeFile(t, in, text.String())
	mustSucceed(t, "run", "wordcount", "--input", in, "--out", out, "--rate", "20000", "--interval", "100ms",
		"--autoscale", "--workers", "1", "--max-workers", "2", "--target-utilization", "0.5")
	if got, want := readFile(t, out), wordcountCSV(text.String()); got != want {
		t.Errorf("the counts of a job that sizes itself differ from the reference")
	}
	// With Prompt's rounds, whose task count follows the load within the
	// instances the sizing gives.
	outP := filepath.Join(dir, "words-prompt.csv")
	mustSucceed(t, "run", "wordcount", "--input", in, "--out", outP, "--rate", "20000", "--interval", "100ms", "--partitioning", "prompt",
		"--autoscale", "--workers", "1", "--max-workers", "2", "--target-utilization", "0.5")
	if got, want := readFile(t, outP), wordcountCSV(text.String()); got != want {
		t.Errorf("the counts of a job partitioned by prompt that sizes itself differ from the reference")
	}
	// Over two processes, which decide alike.
	out2 := filepath.Join(dir, "words2.csv")
	mustSucceed(t, "launch", "-n", "2", "--", "run", "wordcount", "--input", in, "--out", out2, "--rate", "20000", "--interval", "100ms",
		"--autoscale", "--workers", "1", "--max-workers", "2", "--target-utilization", "0.5")
	if got, want := readFile(t, out2), wordcountCSV(text.String()); got != want {
		t.Errorf("the counts of a job of two processes that sizes itself differ from the reference")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-workers", "2"}, "needs --autoscale"},
		{[]string{"--target-utilization", "0.5"}, "needs --autoscale"},
		{[]string{"--autoscale", "--workers", "2", "--max-workers", "1"}, "--max-workers 1"},
		{[]string{"--autoscale", "--target-utilization", "0.1"}, "--target-utilization"},
		{[]string{"--autoscale", "--ordered"}, "Autoscale"},
	} {
		mustFail(t, append([]string{"run", "wordcount", "--input", in, "--out", filepath.Join(dir, "x.csv")}, c.args...), c.want)
	}
}
