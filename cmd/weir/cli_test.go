package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/wordcount"
	"github.com/weirstream/weir/jobs/ysb"
)

// weirBin is the weir binary built once for the tests.
var weirBin string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "weir-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	goTool, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot find the go command:", err)
		return 1
	}
	weirBin = filepath.Join(dir, "weir")
	cmd := exec.Command(goTool, "build", "-o", weirBin, ".")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "go build:", err)
		return 1
	}
	return m.Run()
}

type result struct {
	stdout, stderr string
	code           int
}

// runWeir runs the binary with args.
func runWeir(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, weirBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("weir %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// mustSucceed runs the binary and fails the test unless it exits 0.
func mustSucceed(t *testing.T, args ...string) result {
	t.Helper()
	r := runWeir(t, args...)
	if r.code != 0 {
		t.Fatalf("weir %s: exit %d\nstderr: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r
}

// mustFail runs the binary and checks that it fails with a one-line error
// containing each of want.
func mustFail(t *testing.T, args []string, want ...string) result {
	t.Helper()
	r := runWeir(t, args...)
	if r.code == 0 {
		t.Fatalf("weir %s: exit 0; want failure\nstderr: %s", strings.Join(args, " "), r.stderr)
	}
	msg := strings.TrimSuffix(r.stderr, "\n")
	if msg == "" || strings.Contains(msg, "\n") || !strings.HasSuffix(r.stderr, "\n") {
		t.Errorf("weir %s: stderr is not one line: %q", strings.Join(args, " "), r.stderr)
	}
	if !strings.HasPrefix(msg, "weir: ") {
		t.Errorf("weir %s: error %q does not start with \"weir: \"", strings.Join(args, " "), msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("weir %s: error %q does not mention %q", strings.Join(args, " "), msg, w)
		}
	}
	return r
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ysbInput generates n events spread over span ms of event time, arriving
// with up to 4 s of delay, and the campaign map.
func ysbInput(n int, seed uint64, span int64) ([]gen.YSBEvent, ysb.Campaigns) {
	evs, ads := gen.YSBEvents(n, seed)
	r := rand.New(rand.NewPCG(seed, 1))
	type arrival struct {
		at int64
		e  gen.YSBEvent
	}
	arr := make([]arrival, n)
	for i := range evs {
		evs[i].EventTime = gen.YSBEventsStart + 4_321 + int64(i)*span/int64(n)
		arr[i] = arrival{evs[i].EventTime + r.Int64N(4_001), evs[i]}
	}
	sort.SliceStable(arr, func(a, b int) bool { return arr[a].at < arr[b].at })
	for i := range arr {
		evs[i] = arr[i].e
	}
	return evs, ysb.FromAds(ads)
}

func jsonLines(evs []gen.YSBEvent) []string {
	out := make([]string, len(evs))
	for i := range evs {
		out[i] = string(evs[i].AppendJSON(nil))
	}
	return out
}

func writeLines(t *testing.T, path string, lines []string) {
	t.Helper()
	writeFile(t, path, strings.Join(lines, "\n")+"\n")
}

func writeCampaigns(t *testing.T, path string, c ysb.Campaigns) {
	t.Helper()
	var ads []string
	for ad := range c {
		ads = append(ads, ad)
	}
	sort.Strings(ads)
	lines := []string{"ad_id,campaign_id"}
	for _, ad := range ads {
		lines = append(lines, ad+","+c[ad])
	}
	writeLines(t, path, lines)
}

func ysbCSV(t *testing.T, evs []gen.YSBEvent, c ysb.Campaigns) string {
	t.Helper()
	var b bytes.Buffer
	if err := ysb.WriteCSV(&b, ysb.Reference(evs, c)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRunYSBFile(t *testing.T) {
	n := 60_000
	if testing.Short() {
		n = 20_000
	}
	dir := t.TempDir()
	evs, camp := ysbInput(n, 5, 36_000)
	events, campaigns := filepath.Join(dir, "events.jsonl"), filepath.Join(dir, "campaigns.csv")
	writeLines(t, events, jsonLines(evs))
	writeCampaigns(t, campaigns, camp)
	want := ysbCSV(t, evs, camp)
	if rows := strings.Count(want, "\n") - 1; rows < 300 {
		t.Fatalf("reference has only %d rows", rows)
	}
	for _, args := range [][]string{
		{"--workers", "1"},
		{"--workers", "3", "--interval", "5ms"},
		{"--workers", "4", "--epoch-records", "500"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.csv")
			r := mustSucceed(t, append([]string{"run", "ysb", "--events", events, "--campaigns", campaigns, "--out", out}, args...)...)
			if got := readFile(t, out); got != want {
				t.Errorf("output differs from the reference: %d bytes, want %d\n%s", len(got), len(want), firstDiff(got, want))
			}
			if !strings.Contains(r.stderr, fmt.Sprintf("%d events", n)) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stderr %q; want one summary line with %d events", r.stderr, n)
			}
			if strings.Contains(r.stderr, "late") {
				t.Errorf("stderr reports late events: %q", r.stderr)
			}
		})
	}
	// Disorder beyond --max-delay loses events, and the summary says so.
	t.Run("max-delay=0", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out.csv")
		r := mustSucceed(t, "run", "ysb", "--events", events, "--campaigns", campaigns, "--out", out, "--max-delay", "0s", "--workers", "2", "--epoch-records", "200")
		if !strings.Contains(r.stderr, "late events not counted") {
			t.Errorf("stderr %q does not report late events", r.stderr)
		}
		if readFile(t, out) == want {
			t.Error("output equals the reference although events were late")
		}
	})
}

// firstDiff describes the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, a, b)
		}
	}
	return "no difference"
}

// badYSBLines returns lines the YSB file job must reject, made from e.
func badYSBLines(e gen.YSBEvent) []string {
	js := string(e.AppendJSON(nil))
	noUser := strings.Replace(js, `"user_id":"`+e.UserID+`",`, "", 1)
	badTime := strings.Replace(js, `"event_time":"`+strconv.FormatInt(e.EventTime, 10)+`"`, `"event_time":"soon"`, 1)
	v := e
	v.EventType, v.AdID = "view", "ffffffff-ffff-4fff-8fff-ffffffffffff"
	return []string{js[:len(js)-7], noUser, badTime, string(v.AppendJSON(nil))}
}

func TestRunYSBBadInput(t *testing.T) {
	dir := t.TempDir()
	evs, camp := ysbInput(12_000, 8, 30_000)
	campaigns := filepath.Join(dir, "campaigns.csv")
	writeCampaigns(t, campaigns, camp)
	good := jsonLines(evs)
	bad := badYSBLines(evs[7])

	// One bad line at a time, without --dead-letter.
	for k, b := range bad {
		at := 1_000 + k*3_001 // 0-based
		lines := slices.Insert(slices.Clone(good), at, b)
		events := filepath.Join(dir, fmt.Sprintf("bad%d.jsonl", k))
		writeLines(t, events, lines)
		for _, w := range []string{"1", "4"} {
			out := filepath.Join(dir, "out.csv")
			mustFail(t, []string{"run", "ysb", "--events", events, "--campaigns", campaigns, "--out", out, "--workers", w},
				fmt.Sprintf("%s:%d:", events, at+1))
		}
	}

	// All of them, with --dead-letter.
	lines := slices.Clone(good)
	for k, b := range bad {
		lines = slices.Insert(lines, 500+k*2_500, b)
	}
	events := filepath.Join(dir, "mixed.jsonl")
	writeLines(t, events, lines)
	want := ysbCSV(t, evs, camp)
	wantDead := slices.Sorted(slices.Values(bad))
	for _, w := range []string{"1", "2", "4"} {
		t.Run("dead-letter/workers="+w, func(t *testing.T) {
			d := t.TempDir()
			out, dead := filepath.Join(d, "out.csv"), filepath.Join(d, "dead.jsonl")
			r := mustSucceed(t, "run", "ysb", "--events", events, "--campaigns", campaigns, "--out", out, "--dead-letter", dead, "--workers", w)
			if got := readFile(t, out); got != want {
				t.Errorf("output differs from the reference over the good lines\n%s", firstDiff(got, want))
			}
			deadText := readFile(t, dead)
			letters, err := file.ParseDeadLetters([]byte(deadText))
			if err != nil {
				t.Fatal(err)
			}
			var gotDead []string
			for _, l := range letters {
				gotDead = append(gotDead, l.Record)
				if l.Source != "events" || l.File != events || l.Reason == "" || l.Line < 1 || l.Line > int64(len(lines)) || lines[l.Line-1] != l.Record {
					t.Errorf("dead letter %+v: not from line %d of %s, or without a reason", l, l.Line, events)
				}
			}
			sort.Strings(gotDead)
			if !strings.HasSuffix(deadText, "\n") || !slices.Equal(gotDead, wantDead) {
				t.Errorf("dead-letter file holds\n%s\nwant the lines\n%s", deadText, strings.Join(wantDead, "\n"))
			}
			if !strings.Contains(r.stderr, fmt.Sprintf("%d bad lines", len(bad))) {
				t.Errorf("stderr %q does not report %d bad lines", r.stderr, len(bad))
			}
		})
	}
}

// csvField quotes a field as RFC 4180 does when it holds a comma, a quote
// or a line break.
func csvField(s string) string {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func TestRunWordcount(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	vocab := []string{"the", "The", "a", "b", "é", "日本", "a,b", `q"uote`, "x'y", "zz", "Zz", "_", "10", "9", "ÿ"}
	for len(vocab) < 400 {
		vocab = append(vocab, fmt.Sprintf("w%d", r.IntN(100_000)))
	}
	zipf := rand.NewZipf(r, 1.3, 1, uint64(len(vocab)-1))
	seps := []string{" ", "  ", "\t", "\u00a0", "\u3000", " \t"}
	text := func(lines int, eol string) string {
		var b strings.Builder
		for i := range lines {
			if i%17 == 0 {
				b.WriteString(eol)
				continue
			}
			for j := range 1 + r.IntN(12) {
				if j > 0 || r.IntN(4) == 0 {
					b.WriteString(seps[r.IntN(len(seps))])
				}
				b.WriteString(vocab[zipf.Uint64()])
			}
			b.WriteString(eol)
		}
		return b.String()
	}
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	writeFile(t, a, text(8_000, "\n"))
	writeFile(t, b, text(5_000, "\r\n")+"last line, no newline")

	var lines []string
	for _, p := range []string{a, b} {
		for _, l := range strings.Split(readFile(t, p), "\n") {
			lines = append(lines, strings.TrimSuffix(l, "\r"))
		}
	}
	var want strings.Builder
	want.WriteString("word,count\n")
	for _, res := range wordcount.Reference(lines) {
		fmt.Fprintf(&want, "%s,%d\n", csvField(res.Key), res.Value)
	}
	for _, w := range []string{"1", "2", "4", "8"} {
		t.Run("workers="+w, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "words.csv")
			res := mustSucceed(t, "run", "wordcount", "--input", a, "--input", b, "--out", out, "--workers", w)
			got := readFile(t, out)
			if got != want.String() {
				t.Errorf("output differs from the reference\n%s", firstDiff(got, want.String()))
			}
			if !strings.Contains(res.stderr, "wordcount:") {
				t.Errorf("stderr %q; want a summary", res.stderr)
			}
		})
	}
	// The vocabulary makes the writer quote fields.
	for _, q := range []string{"\n\"a,b\",", "\n\"q\"\"uote\","} {
		if !strings.Contains(want.String(), q) {
			t.Errorf("expected output lacks %q", q)
		}
	}
}

func TestCLIErrors(t *testing.T) {
	dir := t.TempDir()
	evs, camp := ysbInput(2_000, 2, 20_000)
	events, campaigns := filepath.Join(dir, "events.jsonl"), filepath.Join(dir, "campaigns.csv")
	writeLines(t, events, jsonLines(evs))
	writeCampaigns(t, campaigns, camp)
	noHeader := filepath.Join(dir, "noheader.csv")
	writeFile(t, noHeader, strings.SplitN(readFile(t, campaigns), "\n", 2)[1])
	badRow := filepath.Join(dir, "badrow.csv")
	writeFile(t, badRow, "ad_id,campaign_id\na1,c1\na2\n")
	text := filepath.Join(dir, "text.txt")
	writeFile(t, text, "hello world\n")
	missing := filepath.Join(dir, "missing.jsonl")
	out := filepath.Join(dir, "out.csv")
	emptyDir := filepath.Join(dir, "empty")
	if err := os.Mkdir(emptyDir, 0o755); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown-flag", []string{"run", "ysb", "--no-such-flag"}, []string{"--no-such-flag"}},
		{"unknown-flag-wordcount", []string{"run", "wordcount", "--input", text, "--out", out, "--frobnicate", "1"}, []string{"--frobnicate"}},
		{"missing-events", []string{"run", "ysb", "--events", missing, "--campaigns", campaigns, "--out", out}, []string{missing}},
		{"missing-campaigns", []string{"run", "ysb", "--events", events, "--campaigns", missing, "--out", out}, []string{missing}},
		{"missing-input", []string{"run", "wordcount", "--input", text, "--input", missing, "--out", out}, []string{missing}},
		{"input-empty-dir", []string{"run", "wordcount", "--input", emptyDir, "--out", out}, []string{emptyDir, "holds no file"}},
		{"no-header", []string{"run", "ysb", "--events", events, "--campaigns", noHeader, "--out", out}, []string{noHeader + ":1:", "ad_id,campaign_id"}},
		{"bad-row", []string{"run", "ysb", "--events", events, "--campaigns", badRow, "--out", out}, []string{badRow + ":3:"}},
		{"no-out-ysb", []string{"run", "ysb", "--events", events, "--campaigns", campaigns}, []string{"--out"}},
		{"no-out-wordcount", []string{"run", "wordcount", "--input", text}, []string{"--out"}},
		{"no-campaigns", []string{"run", "ysb", "--events", events, "--out", out}, []string{"--campaigns"}},
		{"no-input", []string{"run", "wordcount", "--out", out}, []string{"--input"}},
		{"campaigns-without-file", []string{"run", "ysb", "--events", "100", "--campaigns", campaigns}, []string{"--campaigns"}},
		{"no-job", []string{"run"}, []string{"ysb", "wordcount"}},
		{"unknown-job", []string{"explain", "nope"}, []string{"nope"}},
		{"bench-zero-events", []string{"bench", "ysb", "--events", "0"}, []string{"--events"}},
		{"partitioning-wordcount", []string{"run", "wordcount", "--input", text, "--out", out, "--partitioning", "sideways"}, []string{"--partitioning", `"sideways"`, "hash", "prompt"}},
		{"partitioning-all-wordcount", []string{"run", "wordcount", "--input", text, "--out", out, "--partitioning", "all"}, []string{"--partitioning", `"all"`}},
		{"partitioning-ysb", []string{"run", "ysb", "--events", "100", "--partitioning", "Hash"}, []string{"--partitioning", `"Hash"`}},
		{"partitioning-bench-skew", []string{"bench", "skew", "--events", "100", "--partitioning", "pk"}, []string{"--partitioning", `"pk"`, "all"}},
		{"bench-skew-zero-events", []string{"bench", "skew", "--events", "0"}, []string{"--events"}},
		{"bench-skew-dist", []string{"bench", "skew", "--events", "100", "--dist", "pareto"}, []string{"pareto"}},
		{"bench-skew-text-dir", []string{"bench", "skew", "--events", "100", "--dist", "text", "--text-dir", missing}, []string{missing}},
		{"simulate-dist", []string{"bench", "skew", "--simulate", "--dist", "pareto"}, []string{"pareto"}},
		{"simulate-text-dir", []string{"bench", "skew", "--simulate", "--dist", "text", "--text-dir", missing}, []string{missing}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(out)
			mustFail(t, c.args, c.want...)
		})
	}
}

func TestBenchYSB(t *testing.T) {
	r := mustSucceed(t, "bench", "ysb", "--events", "200000", "--workers", "2", "--baseline")
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("stdout %q is not a JSON object: %v", r.stdout, err)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		t.Errorf("stdout holds more than one JSON value: %q", r.stdout)
	}
	if strings.Count(strings.TrimSpace(r.stdout), "\n") != 0 {
		t.Errorf("stdout is not one line: %q", r.stdout)
	}
	num := func(k string) float64 {
		v, ok := m[k].(float64)
		if !ok {
			t.Errorf("%s = %v (%T); want a number", k, m[k], m[k])
		}
		return v
	}
	if v := num("events"); v != 200_000 {
		t.Errorf("events = %v, want 200000", v)
	}
	if v := num("workers"); v != 2 {
		t.Errorf("workers = %v, want 2", v)
	}
	secs, rate := num("seconds"), num("events_per_s")
	if secs <= 0 || rate <= 0 {
		t.Errorf("seconds = %v, events_per_s = %v; want positive", secs, rate)
	} else if d := rate*secs/200_000 - 1; d > 1e-6 || d < -1e-6 {
		t.Errorf("events_per_s = %v is not events/seconds = %v", rate, 200_000/secs)
	}
	p50, p99 := num("latency_p50_ms"), num("latency_p99_ms")
	if p50 < 0 || p99 < p50 {
		t.Errorf("latency_p50_ms = %v, latency_p99_ms = %v", p50, p99)
	}
	for _, k := range []string{"baseline_events_per_s", "ratio_to_baseline"} {
		if v := num(k); v <= 0 {
			t.Errorf("%s = %v; want positive with --baseline", k, v)
		}
	}
	if m["checked"] != true {
		t.Errorf("checked = %v", m["checked"])
	}
}

func TestExplainYSB(t *testing.T) {
	r := mustSucceed(t, "explain", "ysb", "--workers", "3")
	plan := r.stdout
	for _, w := range []string{"job ysb", "3 workers", "window", "tumbling 10s", "keygroup", "eventtime", "collect"} {
		if !strings.Contains(plan, w) {
			t.Errorf("plan does not mention %q:\n%s", w, plan)
		}
	}
	if !regexp.MustCompile(`window\S*.*<- keygroup`).MatchString(plan) {
		t.Errorf("plan does not show a keygroup exchange into the window:\n%s", plan)
	}
	r = mustSucceed(t, "explain", "wordcount", "--workers", "2")
	for _, w := range []string{"job wordcount", "global", "keygroup"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("wordcount plan does not mention %q:\n%s", w, r.stdout)
		}
	}
	r = mustSucceed(t, "explain", "ysb", "--format", "dot", "--partitioning", "prompt")
	if !strings.HasPrefix(r.stdout, `digraph "ysb" {`) || !strings.Contains(r.stdout, `label="keygroup shuffle"`) ||
		!strings.Contains(r.stdout, "prompt") {
		t.Errorf("dot plan:\n%s", r.stdout)
	}
	mustFail(t, []string{"explain", "ysb", "--format", "svg"}, "want text or dot")
}

func TestRunYSBGenerator(t *testing.T) {
	re := regexp.MustCompile(`^ysb: 200000 events in [0-9.]+s \([0-9]+ events/s\), 2 workers, [0-9]+ epochs, .* ([0-9]+) windows over ([0-9]+) campaigns, 0 late$`)
	summary := func(r result) []string {
		t.Helper()
		line := strings.TrimSuffix(r.stdout, "\n")
		if line == "" || strings.Contains(line, "\n") {
			t.Fatalf("stdout %q; want one summary line", r.stdout)
		}
		mm := re.FindStringSubmatch(line)
		if mm == nil {
			t.Fatalf("summary %q does not match %s", line, re)
		}
		return mm
	}
	summary(mustSucceed(t, "run", "ysb", "--events", "200000", "--rate", "0", "--workers", "2"))

	out := filepath.Join(t.TempDir(), "gen.csv")
	mm := summary(mustSucceed(t, "run", "ysb", "--events", "200000", "--rate", "0", "--workers", "2", "--out", out))
	// The CSV holds the windows the summary counts, with counts adding up
	// to the views.
	rows := strings.Split(strings.TrimSuffix(readFile(t, out), "\n"), "\n")
	if rows[0] != "campaign_id,window_start_ms,count" {
		t.Fatalf("header %q", rows[0])
	}
	if strconv.Itoa(len(rows)-1) != mm[1] {
		t.Errorf("CSV has %d rows; summary says %s windows", len(rows)-1, mm[1])
	}
	var total int64
	for _, row := range rows[1:] {
		f := strings.Split(row, ",")
		n, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil || len(f) != 3 {
			t.Fatalf("bad row %q", row)
		}
		total += n
	}
	if total < 200_000/4 || total > 200_000/2 {
		t.Errorf("the windows count %d views of 200000 events (a third are views)", total)
	}
}

// The worked example in docs/design.md is what weir explain prints.
func TestDesignWorkedExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	const head = "job fission: 4 workers"
	i := bytes.Index(doc, []byte(head))
	if i < 0 {
		t.Fatalf("docs/design.md has no explain output starting %q", head)
	}
	want := string(doc[i:])
	want = want[:strings.Index(want, "```")]
	r := runWeir(t, "explain", "fission", "--ordered", "--workers", "4")
	if r.code != 0 || r.stdout != want {
		t.Errorf("weir explain fission --ordered --workers 4 (exit %d):\n%s\ndocs/design.md shows:\n%s", r.code, r.stdout, want)
	}
}
