package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// oneJSON parses text as exactly one JSON object on one line.
func oneJSON(t *testing.T, text string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(text))
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%q is not a JSON object: %v", text, err)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		t.Errorf("%q holds more than one JSON value", text)
	}
	if strings.Count(strings.TrimSpace(text), "\n") != 0 {
		t.Errorf("%q is not one line", text)
	}
	return m
}

// number returns m[k], failing unless it is a number.
func number(t *testing.T, m map[string]any, k string) float64 {
	t.Helper()
	v, ok := m[k].(float64)
	if !ok {
		t.Errorf("%s = %v (%T); want a number", k, m[k], m[k])
	}
	return v
}

var allStrategies = []string{"hash", "roundrobin", "pkg", "prompt"}

// checkPartitionFigures checks the partitioning figures of one strategy.
func checkPartitionFigures(t *testing.T, m map[string]any, strategy string) {
	t.Helper()
	if m["strategy"] != strategy {
		t.Errorf("strategy = %v, want %s", m["strategy"], strategy)
	}
	for _, k := range []string{"map_imbalance", "reduce_imbalance"} {
		if v := number(t, m, k); v < 1 {
			t.Errorf("%s = %v; want at least 1", k, v)
		}
	}
	for _, k := range []string{"split_keys", "epochs", "partitions"} {
		if v := number(t, m, k); v < 0 {
			t.Errorf("%s = %v; want at least 0", k, v)
		}
	}
	if number(t, m, "epochs") < 1 {
		t.Errorf("epochs = %v; want at least 1", m["epochs"])
	}
}

func TestBenchSkew(t *testing.T) {
	args := []string{"bench", "skew", "--events", "150000", "--keys", "5000", "--s", "1.5", "--workers", "2", "--event-rate", "50000"}
	for _, s := range append(slices.Clone(allStrategies), "auto") {
		t.Run(s, func(t *testing.T) {
			m := oneJSON(t, mustSucceed(t, append(args, "--partitioning", s)...).stdout)
			if v := number(t, m, "events"); v != 150_000 {
				t.Errorf("events = %v, want 150000", v)
			}
			if v := number(t, m, "workers"); v != 2 {
				t.Errorf("workers = %v, want 2", v)
			}
			if v := number(t, m, "events_per_s"); v <= 0 {
				t.Errorf("events_per_s = %v", v)
			}
			if p50, p99 := number(t, m, "latency_p50_ms"), number(t, m, "latency_p99_ms"); p50 < 0 || p99 < p50 {
				t.Errorf("latency_p50_ms = %v, latency_p99_ms = %v", p50, p99)
			}
			if m["checked"] != true {
				t.Errorf("checked = %v", m["checked"])
			}
			checkPartitionFigures(t, m, s)
		})
	}
	t.Run("all", func(t *testing.T) {
		m := oneJSON(t, mustSucceed(t, append(args, "--partitioning", "all", "--runs", "2", "--dist", "uniform")...).stdout)
		per, _ := m["strategies"].(map[string]any)
		ratios, _ := m["ratio_to_hash"].(map[string]any)
		withAuto := append(slices.Clone(allStrategies), "auto")
		if len(per) != len(withAuto) || len(ratios) != len(withAuto) {
			t.Fatalf("strategies = %v, ratio_to_hash = %v; want one entry per strategy and auto", m["strategies"], m["ratio_to_hash"])
		}
		for _, s := range withAuto {
			fig, _ := per[s].(map[string]any)
			checkPartitionFigures(t, fig, s)
			if v := number(t, fig, "events_per_s"); v <= 0 {
				t.Errorf("%s: events_per_s = %v", s, v)
			}
			if r, _ := ratios[s].(float64); r <= 0 || s == "hash" && r != 1 {
				t.Errorf("ratio_to_hash[%s] = %v", s, ratios[s])
			}
		}
	})
}

// TestBenchSkewRate paces the generator: the run lasts about
// events/rate, and the counts per key are checked.
func TestBenchSkewRate(t *testing.T) {
	m := oneJSON(t, mustSucceed(t, "bench", "skew", "--events", "100000", "--keys", "2000", "--rate", "500000",
		"--workers", "2", "--partitioning", "prompt").stdout)
	if v := number(t, m, "seconds"); v < 0.15 {
		t.Errorf("seconds = %v; 100000 records at 500000/s take at least 0.2 s", v)
	}
	if m["checked"] != true {
		t.Errorf("checked = %v", m["checked"])
	}
	mustFail(t, []string{"bench", "skew", "--events", "1000", "--rate", "1000", "--dist", "uniform"}, "--rate needs --dist zipf")
}

// TestBenchSkewText runs the live bench over the words of a source tree:
// its keys are the distinct words, and the output is checked against the
// plain count.
func TestBenchSkewText(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.go"), strings.Repeat("package a\n\nfunc f() error {\n\treturn nil\n}\n", 50))
	writeFile(t, filepath.Join(dir, "b.go"), "package b // only in b\n")
	// The words: package a func f() error { return nil } b // only in
	// b.go adds b, //, only, in.
	m := oneJSON(t, mustSucceed(t, "bench", "skew", "--dist", "text", "--text-dir", dir, "--events", "20000", "--workers", "2",
		"--event-rate", "5000", "--partitioning", "auto").stdout)
	if number(t, m, "keys") != 13 || m["checked"] != true || m["text_dir"] != dir {
		t.Errorf("output %v; want 13 keys, checked, over %s", m, dir)
	}
}

func TestBenchSkewSimulate(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.go"), strings.Repeat("package a\n\nfunc f() error {\n\tif err := g(); err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n", 400))
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "sub", "b.go"), "package b // the only words of b.go\n")
	for _, args := range [][]string{
		{"--dist", "zipf", "--s", "1.5"},
		{"--dist", "uniform"},
		{"--dist", "text", "--text-dir", dir},
	} {
		t.Run(args[1], func(t *testing.T) {
			base := []string{"bench", "skew", "--simulate", "--partitions", "8", "--epochs", "2", "--epoch-size", "20000", "--keys", "5000"}
			a := mustSucceed(t, append(base, args...)...).stdout
			if b := mustSucceed(t, append(base, args...)...).stdout; a != b {
				t.Errorf("two simulations differ:\n%s\n%s", a, b)
			}
			m := oneJSON(t, a)
			per, _ := m["strategies"].(map[string]any)
			if len(per) != len(allStrategies) || number(t, m, "partitions") != 8 {
				t.Fatalf("output %s; want every strategy over 8 partitions", a)
			}
			for _, s := range allStrategies {
				r, _ := per[s].(map[string]any)
				if number(t, r, "records") != 40_000 || number(t, r, "events_per_s") <= 0 || number(t, r, "map_imbalance") < 1 {
					t.Errorf("%s: %v", s, r)
				}
			}
		})
	}
}

// TestRunWordcountStats runs the word count under every strategy with
// --stats: the output is the same, and stderr ends with the figures.
func TestRunWordcountStats(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(5, 6))
	zipf := rand.NewZipf(r, 1.4, 1, 20_000)
	var b strings.Builder
	for i := range 30_000 {
		for j := range 1 + i%9 {
			if j > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "w%d", zipf.Uint64())
		}
		b.WriteByte('\n')
	}
	in := filepath.Join(dir, "in.txt")
	writeFile(t, in, b.String())
	var first string
	for _, s := range append([]string{"auto"}, allStrategies...) {
		for _, w := range []string{"1", "3"} {
			t.Run(s+"/workers="+w, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "words.csv")
				res := mustSucceed(t, "run", "wordcount", "--input", in, "--out", out, "--workers", w, "--partitioning", s, "--epoch-records", "2000", "--stats")
				got := readFile(t, out)
				if first == "" {
					first = got
				} else if got != first {
					t.Errorf("output differs from the first strategy's\n%s", firstDiff(got, first))
				}
				lines := strings.Split(strings.TrimSuffix(res.stderr, "\n"), "\n")
				if len(lines) != 2 || !strings.HasPrefix(lines[0], "wordcount:") {
					t.Fatalf("stderr %q; want the summary, then one JSON object", res.stderr)
				}
				m := oneJSON(t, lines[1])
				if s == "auto" {
					if st, _ := m["strategy"].(string); !slices.Contains(append([]string{"auto"}, allStrategies...), st) {
						t.Errorf("strategy = %v under auto", m["strategy"])
					}
					return
				}
				checkPartitionFigures(t, m, s)
				if p := number(t, m, "partitions"); strconv.Itoa(int(p)) != w {
					t.Errorf("partitions = %v, want %s", p, w)
				}
			})
		}
	}
}
