package report

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func readFixture(t *testing.T, names ...string) []Entry {
	t.Helper()
	var all []Entry
	for _, n := range names {
		f, err := os.Open(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		es, err := Read(f, n)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, es...)
	}
	return all
}

func build(t *testing.T, names ...string) (*Report, string) {
	t.Helper()
	r, err := Build(readFixture(t, names...), Options{PlotDir: "benchmarks", Built: "2025-01-02"})
	if err != nil {
		t.Fatal(err)
	}
	return r, string(r.Markdown)
}

// section returns the text of md's "## title" section.
func section(t *testing.T, md, title string) string {
	t.Helper()
	s, ok := Section(md, title)
	if !ok {
		t.Fatalf("the page has no section %q:\n%s", title, md)
	}
	return s
}

func TestReportBuildTables(t *testing.T) {
	r, md := build(t, "fixture_entries.jsonl")
	if os.Getenv("REPORT_DUMP") != "" {
		os.WriteFile(os.Getenv("REPORT_DUMP"), r.Markdown, 0o644)
		for _, p := range r.Plots {
			os.WriteFile(filepath.Join(filepath.Dir(os.Getenv("REPORT_DUMP")), p.Name), p.Data, 0o644)
		}
	}
	want := map[string][]string{
		"Machine": {"| Fixture CPU 9000 | 2 | 24.0 GiB | go1.26.8 | linux/amd64 | 0.50 0.40 0.30 | 1.50 1.40 1.30 | abc1234 | 2025-01-02T03:04:05Z |"},
		"Nexmark": {
			"| q0 | 5.00 M | 4.50 M | 3.50 M | 165.0 K | 425.0 K | 27.27× | 10.59× | 0.64× | yes |",
			"| query | Weir per core, 1 worker | Weir per core, 2 workers | Weir per core, 2 processes × 1 worker | Flink | Feldera | 2 workers / Flink | 2 workers / Feldera | engine / loop, 1 worker | target met |",
			"| q4 | 1.00 M | 1.30 M | — | 31.0 K | 265.0 K | 41.94× | 4.91× | 0.25× | **no**: per core 1.30 M < 1.50 M, engine / loop 0.25 < 0.3 |",
			"| q9 | 1.20 M | 1.00 M | — | — | — | — | — | 0.40× | **no**: per core 1.00 M < 1.50 M |",
			"| q9 | 1 worker | 1,000,000 | 1.20 M | 1.20 M | 3.00 M | 0.40× | 20.0 ms | 545 ms | **no** | [1] |",
			"| q0 | 2 workers | 1,000,000 | 9.00 M | 4.50 M | 7.81 M | 1.15× | 0.020 ms | 0.100 ms | yes | [2] |",
			"| q3 | 2 processes × 1 worker | 1,000,000 | 2.40 M | 1.20 M | — | — | 40.0 ms | 95.0 ms | yes | [3] |",
			"- [1] `weir bench nexmark --query all --events 1000000 --workers 1 --baseline` (ran 12.5 s)",
			"- [2] `weir bench nexmark --query all --events 1000000 --workers 2 --baseline` (ran 10.2 s)",
			"![Nexmark events/s per core by query: Weir at each worker count, Flink and Feldera (log scale)](benchmarks/nexmark_per_core.png)",
		},
		"YSB": {
			"| 1 worker | 1 | 1,000,000 | 40.00 M | 40.00 M | 25 | 10.0 ms | 20.0 ms | 80.00 M | 0.50× | — | yes | [1] |",
			"| 2 processes × 1 worker | 2 | 1,000,000 | 36.00 M | 18.00 M | 30 | 55.0 ms | 90.0 ms | — | — | 0.0177 | yes | [3] |",
			"- [3] `weir launch -n 2 -- bench ysb --events 1000000 --runs 3 --interval 10ms --workers 1` (ran 20.0 s)",
		},
		"Throughput against workers and processes": {"(benchmarks/throughput.png)"},
		"Epoch latency": {"(benchmarks/latency.png)", "(benchmarks/nexmark_latency.png)"},
		"Skew": {
			"| zipf s=1.5, 100000 keys | 2 | prompt | 10.00 M | 0.50× | 1.000 | 1.001 | 3 | 40.0 ms | 50.0 ms | [1] |",
			"| zipf s=1.5, 100000 keys | 8 | hash | 1.000 | 3.280 | 0 | 110.00 M | 1.00× | [3] |",
			"(benchmarks/skew_imbalance.png)",
		},
		"Fission":   {"| 2 | 20,000 | 50 | false | 1.00 M | 900.0 K | 1.90 M | 1.80 M | 1.90× | 5.3% | yes | [1] |"},
		"Transport": {"| 200,000 | 1,024 | plain | 40.00 M | 961.20 M | 24.03 | [1] |"},
	}
	for title, lines := range want {
		s := section(t, md, title)
		for _, l := range lines {
			if !strings.Contains(s, l+"\n") {
				t.Errorf("section %q lacks line\n%s\nit reads:\n%s", title, l, s)
			}
		}
	}
	if strings.Contains(md, "Not available") {
		t.Errorf("every suite has results, yet the page says one is not available:\n%s", md)
	}
	checkPlots(t, r, "nexmark_per_core.png", "throughput.png", "latency.png", "nexmark_latency.png", "skew_imbalance.png")
}

// checkPlots checks that r has exactly the plots named, each a PNG of
// the plots' size.
func checkPlots(t *testing.T, r *Report, names ...string) {
	t.Helper()
	var got []string
	for _, p := range r.Plots {
		got = append(got, p.Name)
		img, err := png.Decode(bytes.NewReader(p.Data))
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		if b := img.Bounds(); b.Dx() != PlotWidth || b.Dy() != PlotHeight {
			t.Errorf("%s is %dx%d; want %dx%d", p.Name, b.Dx(), b.Dy(), PlotWidth, PlotHeight)
		}
		if len(p.Data) > 200<<10 {
			t.Errorf("%s is %d bytes; a plot should be a few tens of KB", p.Name, len(p.Data))
		}
	}
	slices.Sort(got)
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Errorf("plots %v; want %v", got, names)
	}
}

// A suite with no result is not available, with the reason its runs
// gave, and has neither table nor plot; a run that failed beside others
// that printed is listed.
func TestReportMissingSuite(t *testing.T) {
	r, md := build(t, "fixture_missing.jsonl")
	nex := section(t, md, "Nexmark")
	for _, want := range []string{
		"**Not available.** No run of this suite printed a result",
		"- `weir bench nexmark --query all --events 20000 --workers 1 --baseline` (ran 0.1 s): failed (exit status 1): weir: unknown command \"nexmark\" for \"weir bench\"",
	} {
		if !strings.Contains(nex, want) {
			t.Errorf("Nexmark section lacks %q:\n%s", want, nex)
		}
	}
	if strings.Contains(nex, "| q") || strings.Contains(nex, ".png") {
		t.Errorf("a suite that is not available has a table or plot:\n%s", nex)
	}
	ysb := section(t, md, "YSB")
	if !strings.Contains(ysb, ": failed (exit status 1): weir: process 1: connection refused") || !strings.Contains(ysb, "| 1 worker |") {
		t.Errorf("YSB section should list its failed run and its one result:\n%s", ysb)
	}
	for _, s := range []string{"Skew", "Fission", "Transport"} {
		if !strings.Contains(section(t, md, s), "**Not available.** The input holds no line of this suite") {
			t.Errorf("section %s should say it is not available", s)
		}
	}
	if !strings.Contains(md, "| nexmark | **not available** | 1 |") {
		t.Errorf("the summary should say Nexmark is not available:\n%s", md)
	}
	checkPlots(t, r, "throughput.png", "latency.png")
}

// Lines copied from the benchmarks' output (no entry around them) are
// told apart by their fields; their commands are not known, and a job
// the report has no table for is shown as it is.
func TestReportRawLines(t *testing.T) {
	_, md := build(t, "fixture_raw.jsonl")
	if !strings.Contains(md, "The input records no machine") {
		t.Error("the page should say the input records no machine")
	}
	if s := section(t, md, "YSB"); !strings.Contains(s, "- [1] command not recorded (line 1 of `fixture_raw.jsonl`)") {
		t.Errorf("YSB section should say where its line came from:\n%s", s)
	}
	if s := section(t, md, "Fission"); !strings.Contains(s, "line 3 of `fixture_raw.jsonl`") {
		t.Errorf("the fission line is line 3 (after a blank one):\n%s", s)
	}
	if s := section(t, md, "Other: ysb-json"); !strings.Contains(s, "| events_per_s | 30,000,000 | [1] |") {
		t.Errorf("ysb-json's figures should be shown as they are:\n%s", s)
	}
}

func TestReportReadErrorsNameFileAndLine(t *testing.T) {
	cases := []struct{ in, want string }{
		{"{\"job\":\"ysb\"}\n\n{\"job\":\n", "r.jsonl:3: not a JSON object"},
		{"{\"job\":\"ysb\"}\n[1,2]\n", "r.jsonl:2: not a JSON object"},
		{"{\"events\":3}\n", "r.jsonl:1: neither an entry"},
		{"{\"job\":\"ysb\"}\n{\"kind\":\"result\",\"suite\":\"ysb\"}\n", `r.jsonl:2: a result entry needs "suite" and "result"`},
		{"{\"kind\":\"nope\"}\n", `r.jsonl:1: unknown kind "nope"`},
		{"{\"kind\":\"machine\"}\n", `r.jsonl:1: a machine entry without "machine"`},
		{"{\"kind\":\"result\",\"suite\":7}\n", "r.jsonl:1: not an entry"},
	}
	for _, c := range cases {
		_, err := Read(strings.NewReader(c.in), "r.jsonl")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Read(%q) = %v; want an error with %q", c.in, err, c.want)
		}
	}
}

func TestReportEntryRoundTrip(t *testing.T) {
	in := []Entry{
		{Kind: KindMachine, Machine: &Machine{CPU: "x", Cores: 2, Date: "d"}},
		{Kind: KindResult, Suite: YSB, Command: "weir bench ysb", WallSeconds: 1.5, Result: map[string]any{"job": "ysb", "events_per_s": 3.0}},
		{Kind: KindMissing, Suite: Nexmark, Command: "weir bench nexmark", Reason: "exit status 1"},
	}
	var buf bytes.Buffer
	for _, e := range in {
		b, err := e.MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
	}
	out, err := Read(&buf, "f")
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i].File, in[i].Line = "f", i+1
		a, _ := in[i].MarshalLine()
		b, _ := out[i].MarshalLine()
		if !bytes.Equal(a, b) || out[i].Line != i+1 {
			t.Errorf("entry %d: read back %s (line %d); want %s", i, b, out[i].Line, a)
		}
	}
}
