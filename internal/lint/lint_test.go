package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The rules' exceptions, each commented: a hand-unrolled decoder, the
// flag wiring of bench commands, and three loops outside runtime services.
var (
	sizeExceptions = map[string]bool{
		"jobs/ysbjson/fast.go:Decode":            true, // a hand-unrolled JSON decoder, kept whole for speed
		"cmd/weir/bench.go:benchYSBCmd":          true, // flag wiring of one command
		"cmd/weir/bench_json.go:benchYSBJSONCmd": true,
	}
	// Loops that run outside runtime services today.
	goExceptions = map[string]bool{
		"internal/summary/exchange.go": true, // the summary exchange's sender and receivers
		"connector/file/stream.go":     true, // standard input's read-ahead
	}
	goAllowed = []string{"internal/runtime", "internal/transport", "cmd"}
	pureDirs  = []string{"internal/plan", "internal/progress", "internal/window", "internal/partition",
		"internal/state", "internal/jobid", "internal/cluster", "internal/coord", "internal/report", "internal/trace/critical", "internal/migrate"}
)

func module(t *testing.T) []File {
	t.Helper()
	wd, _ := os.Getwd()
	root, err := moduleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("loaded %d files from %s; is it the module?", len(files), root)
	}
	return files
}

func report(t *testing.T, rule string, problems []string) {
	t.Helper()
	for _, p := range problems {
		t.Errorf("%s: %s", rule, p)
	}
}

func TestModule(t *testing.T) {
	files := module(t)
	report(t, "doc.go", DocFiles(files))
	report(t, "sizes", Sizes(files, sizeExceptions))
	report(t, "goroutines", GoStatements(files, goAllowed, goExceptions))
	report(t, "pure packages", Pure(files, pureDirs))
	report(t, "root imports", Imports(files, ".", []string{"github.com/cockroachdb/", "github.com/prometheus/", "github.com/getsentry/", "gonum.org/"}))
}

// The exceptions name what exists: a stale one is removed, not kept.
func TestExceptionsAreUsed(t *testing.T) {
	files := module(t)
	have := map[string]bool{}
	for _, f := range files {
		have[f.path()] = true
	}
	for e := range sizeExceptions {
		file, _, _ := strings.Cut(e, ":")
		if !have[file] {
			t.Errorf("size exception %s names no file", e)
		}
	}
	for e := range goExceptions {
		if !have[e] {
			t.Errorf("go exception %s names no file", e)
		}
	}
	strict := Sizes(files, nil)
	for e := range sizeExceptions {
		found := false
		for _, p := range strict {
			file, fn, _ := strings.Cut(e, ":")
			found = found || strings.HasPrefix(p, file+": func "+fn+" ")
		}
		if !found {
			t.Errorf("size exception %s is no longer needed", e)
		}
	}
}

// fixture writes files (path -> content) under a new directory and loads
// them.
func fixture(t *testing.T, files map[string]string) []File {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// Each rule fails on a fixture that breaks it, and passes the same
// fixture mended.
func TestRulesCatchFixtures(t *testing.T) {
	long := "package big\n\nfunc Long() {\n" + strings.Repeat("\t_ = 1\n", MaxFuncLines) + "}\n" + strings.Repeat("\n", MaxFileLines)
	cases := []struct {
		name  string
		files map[string]string
		check func([]File) []string
		want  string
	}{
		{"no doc.go", map[string]string{"p/a.go": "package p\n"}, DocFiles, "p: no doc.go"},
		{"long file and function", map[string]string{"big/big.go": long},
			func(f []File) []string { return Sizes(f, nil) }, "func Long is"},
		{"go statement", map[string]string{"op/op.go": "package op\n\nfunc F() { go func() {}() }\n"},
			func(f []File) []string { return GoStatements(f, goAllowed, nil) }, "a go statement"},
		{"clock in a pure package", map[string]string{"internal/plan/p.go": "package plan\n\nimport \"time\"\n\nvar T = time.Now()\n"},
			func(f []File) []string { return Pure(f, pureDirs) }, "time.Now in a pure package"},
		{"lock in a pure package", map[string]string{"internal/state/s.go": "package state\n\nimport \"sync\"\n\nvar mu sync.Mutex\n"},
			func(f []File) []string { return Pure(f, pureDirs) }, "sync.Mutex in a pure package"},
		{"file in a pure package", map[string]string{"internal/window/w.go": "package window\n\nimport fs \"os\"\n\nvar _, _ = fs.ReadFile(\"x\")\n"},
			func(f []File) []string { return Pure(f, pureDirs) }, "os.ReadFile in a pure package"},
		{"root imports Pebble", map[string]string{"root.go": "package weir\n\nimport _ \"github.com/cockroachdb/pebble/v2\"\n"},
			func(f []File) []string { return Imports(f, ".", []string{"github.com/cockroachdb/"}) }, "imports github.com/cockroachdb/pebble/v2"},
	}
	for _, c := range cases {
		got := c.check(fixture(t, c.files))
		if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), c.want) {
			t.Errorf("%s: %q; want a problem saying %q", c.name, got, c.want)
		}
	}
	// Mended: the same rules find nothing.
	ok := fixture(t, map[string]string{
		"p/doc.go":              "// Package p.\npackage p\n",
		"p/a.go":                "package p\n\nimport \"time\"\n\nvar D = time.Second\n",
		"internal/plan/doc.go":  "package plan\n",
		"internal/plan/p.go":    "package plan\n\nimport \"time\"\n\nfunc F(d time.Duration) time.Duration { return 2 * d }\n",
		"internal/runtime/r.go": "package runtime\n\nfunc F() { go func() {}() }\n",
	})
	for _, probs := range [][]string{Sizes(ok, nil), GoStatements(ok, goAllowed, nil), Pure(ok, pureDirs), Imports(ok, ".", []string{"github.com/cockroachdb/"})} {
		if len(probs) > 0 {
			t.Errorf("mended fixture: %q", probs)
		}
	}
	if d := DocFiles(ok); len(d) != 1 || d[0] != "internal/runtime: no doc.go" {
		t.Errorf("mended fixture's doc.go check: %q", d)
	}
}
