package main

import (
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/report"
)

// reportSection returns the text of md's "## title" section.
func reportSection(t *testing.T, md, title string) string {
	t.Helper()
	s, ok := report.Section(md, title)
	if !ok {
		t.Fatalf("the page has no section %q:\n%s", title, md)
	}
	return s
}

// checkReportPage checks that the page at out has a table row in each
// suite that this binary can run, and that every image it links is a PNG
// of the plots' size; it returns the page.
func checkReportPage(t *testing.T, out string) string {
	t.Helper()
	md := readFile(t, out)
	rows := map[string]string{"YSB": "| 2 processes × 1 worker | 2 |", "Skew": "| zipf s=1.5, 100000 keys | 64 | prompt |",
		"Fission": "| 2 | 20,000 | 50 | false |", "Transport": "| 200,000 | 1,024 | plain |"}
	for title, row := range rows {
		if s := reportSection(t, md, title); !strings.Contains(s, row) || strings.Contains(s, "Not available") {
			t.Errorf("section %s lacks a row with %q, or has a run without result:\n%s", title, row, s)
		}
	}
	nex := reportSection(t, md, "Nexmark")
	if hasCommand(rootCmd(), []string{"bench", "nexmark"}) {
		if !strings.Contains(nex, "| q0 |") || strings.Contains(nex, "Not available") {
			t.Errorf("this weir has bench nexmark, yet the Nexmark section has no q0 row:\n%s", nex)
		}
	} else if !strings.Contains(nex, "**Not available.**") || !strings.Contains(nex, "this weir binary has no such command") {
		t.Errorf("this weir has no bench nexmark, and the Nexmark section should say so:\n%s", nex)
	}
	links := regexp.MustCompile(`!\[[^\]]*\]\(([^)]+\.png)\)`).FindAllStringSubmatch(md, -1)
	if len(links) < 3 {
		t.Errorf("the page links %d plots; want at least throughput, latency and skew", len(links))
	}
	for _, l := range links {
		f, err := os.Open(filepath.Join(filepath.Dir(out), l[1]))
		if err != nil {
			t.Error(err)
			continue
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", l[1], err)
		} else if b := img.Bounds(); b.Dx() != report.PlotWidth || b.Dy() != report.PlotHeight {
			t.Errorf("%s is %dx%d", l[1], b.Dx(), b.Dy())
		}
	}
	return md
}

// The report runs every suite at a test's size, writes the page, its
// plots and the lines it read, and builds the same tables again from
// those lines without running anything.
func TestBenchReportQuick(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "docs", "benchmarks.md")
	mustSucceed(t, "bench", "report", "--quick", "--out", out)
	md := checkReportPage(t, out)
	results := filepath.Join(dir, "docs", "benchmarks", "results.jsonl")
	if !strings.Contains(md, "--from "+results) {
		t.Errorf("the page does not say how to rebuild it from %s", results)
	}
	again := filepath.Join(dir, "again", "benchmarks.md")
	mustSucceed(t, "bench", "report", "--from", results, "--out", again)
	md2 := checkReportPage(t, again)
	// The tables are the same; the build time and the commands that
	// make the page name other paths.
	table := func(s string) string {
		var rows []string
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "|") {
				rows = append(rows, l)
			}
		}
		return strings.Join(rows, "\n")
	}
	if table(md) != table(md2) {
		t.Errorf("the page built from the recorded lines has other tables:\n%s\n\nfirst:\n%s", table(md2), table(md))
	}
}

func TestBenchReportRefuses(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "r.jsonl")
	writeFile(t, bad, "{\"job\":\"ysb\",\"events_per_s\":1}\n{\"job\":\n")
	mustFail(t, []string{"bench", "report", "--from", bad, "--out", filepath.Join(dir, "b.md")}, bad+":2:", "not a JSON object")
	mustFail(t, []string{"bench", "report", "--out", filepath.Join(dir, "b.txt")}, "--out", ".md")
	mustFail(t, []string{"bench", "report", "--quick", "--from", bad}, "--quick", "--from")
	mustFail(t, []string{"bench", "report", "--from", filepath.Join(dir, "none.jsonl"), "--out", filepath.Join(dir, "b.md")}, "none.jsonl")
	if _, err := os.Stat(filepath.Join(dir, "b.md")); err == nil {
		t.Error("a refused report wrote its page")
	}
}
