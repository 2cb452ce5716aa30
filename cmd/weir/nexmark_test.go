package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/nexmark"
)

// nexmarkUpdating are the queries whose rows update a value per key (the
// first column): their result is the last row of each key.
var nexmarkUpdating = map[string]bool{"q4": true}

// genNexmarkFile writes n events with weir gen nexmark at eventRate events
// per second of event time and returns the file and its events, decoded.
func genNexmarkFile(t *testing.T, dir string, n int, eventRate string, seed int) (string, []gen.NexmarkEvent) {
	t.Helper()
	path := filepath.Join(dir, "events.jsonl")
	r := mustSucceed(t, "gen", "nexmark", "--events", fmt.Sprint(n), "--event-rate", eventRate, "--seed", fmt.Sprint(seed), "--out", path)
	if !strings.Contains(r.stderr, fmt.Sprintf("nexmark: %d events (", n)) {
		t.Errorf("gen nexmark: summary %q", r.stderr)
	}
	return path, decodeNexmark(t, readFile(t, path))
}

// decodeNexmark decodes JSON lines, failing the test on a bad one.
func decodeNexmark(t *testing.T, text string) []gen.NexmarkEvent {
	t.Helper()
	var evs []gen.NexmarkEvent
	for i, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		e, err := nexmark.DecodeJSON(l)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		evs = append(evs, e)
	}
	return evs
}

// nexmarkResult reads query q's CSV: it checks the header and returns the
// final rows, sorted (for an updating query, the last row of each key).
func nexmarkResult(t *testing.T, q, csv string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(csv, "\n"), "\n")
	if lines[0] != nexmark.Header(q) {
		t.Fatalf("%s: header %q, want %q", q, lines[0], nexmark.Header(q))
	}
	rows := lines[1:]
	if nexmarkUpdating[q] {
		last := map[string]string{}
		for _, r := range rows {
			key, _, _ := strings.Cut(r, ",")
			last[key] = r
		}
		rows = rows[:0]
		for _, r := range last {
			rows = append(rows, r)
		}
	}
	slices.Sort(rows)
	return rows
}

// checkNexmark compares query q's CSV with nexmark.Reference over evs.
func checkNexmark(t *testing.T, q, csv string, evs []gen.NexmarkEvent, log string) {
	t.Helper()
	want, err := nexmark.Reference(q, evs)
	if err != nil {
		t.Fatal(err)
	}
	got := nexmarkResult(t, q, csv)
	if !slices.Equal(got, want) {
		t.Errorf("%s: %d final rows, the reference has %d\n%s\n%s", q, len(got), len(want),
			firstDiff(strings.Join(got, "\n"), strings.Join(want, "\n")), log)
	}
}

// Every query over a file of generated events equals its reference, at
// 1, 2 and 4 workers, with time and count epochs.
func TestRunNexmarkInput(t *testing.T) {
	dir := t.TempDir()
	events, evs := genNexmarkFile(t, dir, 12_000, "150", 3) // 80 s of event time
	for i, q := range nexmark.Names() {
		workers := []string{"1", "2", "4"}[i%3]
		epochs := []string{"--interval", "20ms"}
		if i%2 == 1 {
			epochs = []string{"--epoch-records", "700"}
		}
		out := filepath.Join(dir, q+".csv")
		args := append([]string{"run", "nexmark", "--query", q, "--input", events, "--out", out, "--workers", workers}, epochs...)
		r := mustSucceed(t, args...)
		if !strings.Contains(r.stderr, fmt.Sprintf("nexmark %s: %d events in ", q, len(evs))) {
			t.Errorf("%s: summary %q", q, r.stderr)
		}
		checkNexmark(t, q, readFile(t, out), evs, strings.Join(args, " "))
	}
}

// The same under weir launch -n 2: process 0 writes the result alone.
func TestLaunchNexmark(t *testing.T) {
	dir := t.TempDir()
	events, evs := genNexmarkFile(t, dir, 8_000, "100", 4)
	for _, q := range nexmark.Names() {
		out := filepath.Join(dir, q+".csv")
		args := []string{"launch", "-n", "2", "--", "run", "nexmark", "--query", q, "--input", events, "--out", out, "--workers", "1", "--interval", "50ms"}
		r := mustSucceed(t, args...)
		if !strings.Contains(r.stderr, fmt.Sprintf("[0] nexmark %s: %d events (all 2 processes)", q, len(evs))) {
			t.Errorf("%s: process 0 wrote no summary:\n%s", q, r.stderr)
		}
		checkNexmark(t, q, readFile(t, out), evs, r.stderr)
	}
}

// weir gen nexmark writes the generator's events: the same flags, the
// same file; and run nexmark on the generator, unpaced, reads the same
// events as from the file, here across 2 processes to standard output.
func TestGenNexmark(t *testing.T) {
	dir := t.TempDir()
	path, evs := genNexmarkFile(t, dir, 5_000, "500", 9)
	g := gen.Nexmark{Events: 5_000, Seed: 9, EventTimeRate: 500, StartTime: nexmarkStart}
	var want strings.Builder
	if _, err := nexmark.WriteJSON(&want, g); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != want.String() {
		t.Fatalf("gen nexmark wrote another file than nexmark.WriteJSON of %+v\n%s", g, firstDiff(got, want.String()))
	}
	r := mustSucceed(t, "gen", "nexmark", "--events", "5000", "--event-rate", "500", "--seed", "9", "--out", "-")
	if r.stdout != want.String() {
		t.Errorf("gen nexmark --out -: another output than --out FILE")
	}
	for _, q := range []string{"q3", "q7"} {
		if nexmark.Header(q) == "" {
			t.Fatalf("no query %s", q)
		}
		r := mustSucceed(t, "launch", "-n", "2", "--", "run", "nexmark", "--query", q, "--events", "5000", "--rate", "0",
			"--event-rate", "500", "--seed", "9", "--workers", "1")
		checkNexmark(t, q, r.stdout, evs, r.stderr)
	}
}

// bench nexmark prints one checked line per query, with the baseline.
func TestBenchNexmark(t *testing.T) {
	r := mustSucceed(t, "bench", "nexmark", "--query", "all", "--events", "20000", "--workers", "2", "--baseline", "--event-rate", "1000")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != len(nexmark.Names()) {
		t.Fatalf("%d lines, want one per query:\n%s", len(lines), r.stdout)
	}
	for i, l := range lines {
		m := oneJSON(t, l+"\n")
		if m["query"] != nexmark.Names()[i] || m["checked"] != true || m["events"] != 20000.0 || m["workers"] != 2.0 {
			t.Errorf("line %d: %v", i+1, m)
		}
		rate, perCore := number(t, m, "events_per_s"), number(t, m, "events_per_s_per_core")
		if rate <= 0 || perCore != rate/2 || number(t, m, "baseline_events_per_s") <= 0 || number(t, m, "ratio") <= 0 ||
			number(t, m, "events_per_cpu_s") <= 0 || number(t, m, "cpu_ratio") <= 0 {
			t.Errorf("line %d: rates %v", i+1, m)
		}
	}
}

func TestLaunchBenchNexmark(t *testing.T) {
	q := nexmark.Names()[len(nexmark.Names())-1]
	r := mustSucceed(t, "launch", "-n", "2", "--", "bench", "nexmark", "--query", q, "--events", "100000", "--workers", "1")
	m := oneJSON(t, r.stdout)
	if m["query"] != q || m["processes"] != 2.0 || m["checked"] != true || number(t, m, "events_per_s_per_core") != number(t, m, "events_per_s")/2 {
		t.Errorf("summary %v", m)
	}
}

// Settings that cannot work are refused at start, naming the flag.
func TestRefusedNexmark(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "events.jsonl")
	writeFile(t, events, "")
	out := filepath.Join(dir, "out.csv")
	run := []string{"run", "nexmark", "--query", "q1", "--out", out}
	in := append(append([]string(nil), run...), "--input", events)
	gn := []string{"gen", "nexmark", "--out", out}
	bench := []string{"bench", "nexmark", "--query", "q0", "--events", "1000"}
	with := func(base []string, more ...string) []string { return append(append([]string(nil), base...), more...) }
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "nexmark", "--out", out}, "--query is required: q0, q1"},
		{with(run, "--query", "q6"), "--query q6: no such query; want q0, q1"},
		{with(bench, "--query", "q99"), "--query q99: no such query; want q0, q1, q2"},
		{with(in, "--events", "100"), "--events 100: the events come from --input"},
		{with(in, "--duration", "5s"), "--duration 5s: the events come from --input"},
		{with(in, "--event-rate", "5"), "--event-rate 5: the events come from --input"},
		{with(in, "--seed", "5"), "--seed 5: the events come from --input"},
		{with(run, "--input", "-"), "--input -: run nexmark reads files"},
		{with(run, "--input", filepath.Join(dir, "none.jsonl")), "--input " + filepath.Join(dir, "none.jsonl")},
		{with(in, "--out", events), "--out " + events + ": is the --input file"},
		{with(run, "--dead-letter", filepath.Join(dir, "dl")), "--dead-letter " + filepath.Join(dir, "dl") + ": bad lines come from --input"},
		{with(run, "--events", "100", "--event-rate", "5"), "--event-rate 5: a paced generator (--rate 1e+06) stamps its events with the wall clock"},
		{with(run, "--events", "many"), "--events many: not a number of events"},
		{with(run, "--events", "-5"), "--events -5: a number of events must not be negative"},
		{with(run, "--rate", "0", "--event-rate", "0"), "--event-rate 0: must be a positive, finite number"},
		{with(run, "--rate", "0", "--event-rate", "NaN"), "--event-rate NaN: must be a positive, finite number"},
		{with(run, "--duration", "-1s"), "--duration -1s: must not be negative"},
		{with(run, "--duration", "0"), "the generator needs --duration or --events N to end"},
		{with(run, "--rate", "0", "--events", "1000", "--start-time", "9007199254740993"), "--start-time 9007199254740993: must be within ±2^53 ms"},
		{with(gn, "--events", "0"), "--events 0: want a positive number of events"},
		{with(gn, "--events", "ten"), "--events ten: want a positive number of events"},
		{gn, "--events is required"},
		{[]string{"gen", "nexmark", "--events", "10"}, "--out is required"},
		{with(gn, "--events", "1000000", "--event-rate", "1e-7"), "--event-rate 1e-07: 1000000 events at this rate reach past 2^53 ms"},
		{with(gn, "--events", "10", "--out", filepath.Join(dir, "no", "such", "dir.jsonl")), "directory " + filepath.Join(dir, "no", "such") + " does not exist"},
		{with(bench, "--runs", "0"), "--runs 0: must be at least 1"},
		{with(bench, "--events", "0"), "--events 0: want a positive number of events"},
		{with(bench, "--start-time", "0"), "--start-time 0: the wall clock would differ"},
		{with(bench, "--workers", "0"), "--workers 0: must be at least 1"},
		{[]string{"gen"}, "gen needs a job: nexmark"},
	}
	for _, c := range cases {
		refused(t, c.args, []string{out}, c.want)
	}
	if _, err := os.Stat(filepath.Join(dir, "dl")); !os.IsNotExist(err) {
		t.Errorf("a refused run made its dead-letter file")
	}
}
