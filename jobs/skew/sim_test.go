package skew

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/weirstream/weir/internal/partition"
)

// The targets of skew-aware partitioning: Prompt's blocks within 5% of
// the mean, its reducers within 10%, whatever the skew.
const (
	maxMapImbalance    = 1.05
	maxReduceImbalance = 1.10
)

func byStrategy(rs []SimResult) map[string]SimResult {
	m := map[string]SimResult{}
	for _, r := range rs {
		m[r.Strategy] = r
	}
	return m
}

func simulate(t *testing.T, cfg SimConfig) map[string]SimResult {
	t.Helper()
	rs, err := Simulate(cfg)
	if err != nil {
		t.Fatalf("Simulate: %v", err)
	}
	if len(rs) != len(partition.Strategies()) {
		t.Fatalf("Simulate returned %d results, want one per strategy", len(rs))
	}
	return byStrategy(rs)
}

func TestSimulateDeterministic(t *testing.T) {
	for _, cfg := range []SimConfig{
		{Partitions: 16, Epochs: 3, EpochRecords: 50_000, S: 1.2, Keys: 10_000, Seed: 7},
		{Partitions: 5, Epochs: 2, EpochRecords: 30_000, Dist: "uniform", Keys: 1_000, Seed: 7},
		{Partitions: 8, Epochs: 4, EpochRecords: 7_000, Tokens: strings.Fields(strings.Repeat("the cat and the hat and the bat sat ", 1_000))},
	} {
		a, err := Simulate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Simulate(cfg)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("Simulate(%+v) differs between two calls:\n%+v\n%+v", cfg, a, b)
		}
		if a[0].Strategy != "hash" || a[0].RatioToHash != 1 {
			t.Errorf("first result %+v; want hash, with ratio 1", a[0])
		}
	}
}

// TestSimulateOnePartition: with one partition nothing is split or
// imbalanced, and every strategy but Hash makes one partial per key.
func TestSimulateOnePartition(t *testing.T) {
	m := simulate(t, SimConfig{Partitions: 1, Epochs: 2, EpochRecords: 20_000, S: 1.5, Keys: 5_000, Seed: 1})
	for s, r := range m {
		if r.MapImbalance != 1 || r.ReduceImbalance != 1 || r.SplitKeys != 0 || r.Fragments != r.Keys || r.Records != 40_000 {
			t.Errorf("%s on one partition: %+v", s, r)
		}
	}
}

// TestSimulateMatchesNaiveModel checks the arrival strategies against a
// plain recomputation with maps, and Hash against plain hashing.
func TestSimulateMatchesNaiveModel(t *testing.T) {
	const p, m = 6, 9_000
	cfg := SimConfig{Partitions: p, Epochs: 1, EpochRecords: m, S: 1.1, Keys: 2_000, Seed: 3}
	got := simulate(t, cfg)
	c := Config{S: cfg.S, Keys: cfg.Keys, Seed: cfg.Seed, Events: m}
	recs, err := Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	two := partition.NewTwoChoices(p)
	for _, s := range []string{"hash", "roundrobin", "pkg"} {
		type kb struct {
			key   uint64
			block int
		}
		partials := map[kb]bool{}
		blocks := make([]int64, p)
		red := make([]int64, p)
		keysAt := make([]map[uint64]bool, p)
		for i := range keysAt {
			keysAt[i] = map[uint64]bool{}
		}
		for i, r := range recs {
			h := partition.HashUint64(r.Key)
			var b int
			switch s {
			case "hash":
				b = partition.RoundRobinBlock(int64(i), m, p)
				red[partition.HashIndex(h, p)]++
				keysAt[partition.HashIndex(h, p)][r.Key] = true
			case "roundrobin":
				b = partition.RoundRobinBlock(int64(i), m, p)
			case "pkg":
				b = two.Choose(h)
			}
			blocks[b]++
			if s != "hash" && !partials[kb{r.Key, b}] {
				partials[kb{r.Key, b}] = true
				red[partition.HashIndex(h, p)]++
			}
		}
		perKey := map[uint64]int{}
		for k := range partials {
			perKey[k.key]++
		}
		var split int64
		for _, n := range perKey {
			if n > 1 {
				split++
			}
		}
		var mi, ri partition.Imbalance
		mi.Add(blocks)
		ri.Add(red)
		r := got[s]
		if s == "hash" {
			var redT float64
			for i := range p {
				redT = max(redT, 20*float64(red[i])+40*float64(len(keysAt[i])))
			}
			if r.ReduceSeconds*1e9 != redT {
				t.Errorf("hash: reduce time %v ns, want %v", r.ReduceSeconds*1e9, redT)
			}
		} else if r.Fragments != int64(len(partials)) || r.SplitKeys != split {
			t.Errorf("%s: %d fragments, %d split keys; want %d, %d", s, r.Fragments, r.SplitKeys, len(partials), split)
		}
		if r.MapImbalance != mi.Value() || r.ReduceImbalance != ri.Value() {
			t.Errorf("%s: imbalance map %v reduce %v; want %v, %v", s, r.MapImbalance, r.ReduceImbalance, mi.Value(), ri.Value())
		}
	}
}

func TestSimulateErrors(t *testing.T) {
	for _, cfg := range []SimConfig{
		{Partitions: -1},
		{Epochs: -2},
		{Dist: "pareto"},
		{S: -1},
		{Tokens: []string{}},
	} {
		if _, err := Simulate(cfg); err == nil {
			t.Errorf("Simulate(%+v) succeeded; want an error", cfg)
		}
	}
}

var (
	goWordsOnce sync.Once
	goWords     []string
	goWordsErr  error
)

// sourceWords returns n words of the Go source tree, read once.
func sourceWords(t *testing.T, n int) []string {
	t.Helper()
	goWordsOnce.Do(func() {
		var dir string
		if dir, goWordsErr = GoSourceDir(); goWordsErr == nil {
			goWords, goWordsErr = GoWords(dir, 2_000_000)
		}
	})
	if goWordsErr != nil {
		t.Fatalf("reading the Go source tree: %v", goWordsErr)
	}
	if len(goWords) < n {
		t.Fatalf("the Go source tree has %d words, want %d", len(goWords), n)
	}
	return goWords[:n]
}

// TestPromptBalances checks Prompt against its targets over Zipf keys of
// growing skew and over natural text, at 2 to 64 partitions, and shows
// Hash beside it.
func TestPromptBalances(t *testing.T) {
	epochs, size := 3, 200_000
	if testing.Short() {
		epochs = 1
	}
	type input struct {
		name string
		cfg  SimConfig
	}
	var inputs []input
	for _, s := range []float64{0.8, 1.0, 1.5, 2.0} {
		inputs = append(inputs, input{fmt.Sprintf("zipf-s%v", s), SimConfig{S: s, Keys: 100_000, Seed: 11}})
	}
	inputs = append(inputs, input{"gosrc", SimConfig{Tokens: sourceWords(t, epochs*size)}})
	for _, in := range inputs {
		for _, p := range []int{2, 4, 8, 16, 32, 64} {
			t.Run(fmt.Sprintf("%s/P=%d", in.name, p), func(t *testing.T) {
				cfg := in.cfg
				cfg.Partitions, cfg.Epochs, cfg.EpochRecords = p, epochs, size
				m := simulate(t, cfg)
				pr, h := m["prompt"], m["hash"]
				t.Logf("prompt map %.3f reduce %.3f split %d frags %d %.3gx hash | hash map %.3f reduce %.3f",
					pr.MapImbalance, pr.ReduceImbalance, pr.SplitKeys, pr.Fragments, pr.RatioToHash, h.MapImbalance, h.ReduceImbalance)
				if pr.MapImbalance > maxMapImbalance {
					t.Errorf("prompt map imbalance %.4f > %v (hash: %.4f)", pr.MapImbalance, maxMapImbalance, h.ReduceImbalance)
				}
				if pr.ReduceImbalance > maxReduceImbalance {
					t.Errorf("prompt reduce imbalance %.4f > %v (hash: %.4f)", pr.ReduceImbalance, maxReduceImbalance, h.ReduceImbalance)
				}
			})
		}
	}
}

// TestPromptThroughput: at 64 partitions and Zipf 1.5, the cost model
// gives Prompt at least three times the throughput of Hash.
func TestPromptThroughput(t *testing.T) {
	m := simulate(t, SimConfig{Partitions: 64, Epochs: 3, EpochRecords: 200_000, S: 1.5, Keys: 100_000, Seed: 11})
	for _, s := range []string{"hash", "roundrobin", "pkg", "prompt"} {
		r := m[s]
		t.Logf("%-10s %6.3g events/s  %.2fx hash  map %.3f reduce %.3f", s, r.EventsPerS, r.RatioToHash, r.MapImbalance, r.ReduceImbalance)
	}
	if r := m["prompt"].RatioToHash; r < 3 {
		t.Errorf("prompt's throughput is %.2fx hash's; want at least 3x", r)
	}
}

func TestGoWords(t *testing.T) {
	w := sourceWords(t, 100_000)
	counts := map[string]int{}
	for _, x := range w {
		if strings.TrimSpace(x) != x || x == "" {
			t.Fatalf("word %q has white space", x)
		}
		counts[x]++
	}
	// Source code is skewed: a handful of tokens ("{", "}", ":=", "err",
	// "return", "if") make a large share of it.
	if len(counts) < 5_000 || counts["}"] < 1_000 {
		t.Errorf("%d distinct words, %d closing braces: not Go source?", len(counts), counts["}"])
	}
	if _, err := GoWords(t.TempDir(), 10); err == nil {
		t.Error("GoWords of an empty directory succeeded")
	}
}
