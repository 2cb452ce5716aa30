package weir_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
)

// A job without checkpoints writes to an exactly-once output (file
// parts) as to any other: the output is whole.
func TestTwoPhaseOutputWithoutCheckpoints(t *testing.T) {
	dir := t.TempDir()
	j := weir.NewJob("parts", weir.Workers(2))
	in := make([]int, 500)
	for i := range in {
		in[i] = i
	}
	s := weir.Source(j, "src", weir.SliceSource[int]{Records: in, BatchSize: 16})
	weir.Sink(s, file.Parts(dir, func(b []byte, v int) []byte { return fmt.Appendf(b, "%d\n", v) }), weir.Name("out"))
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var lines []string
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Fields(string(b))...)
	}
	sort.Slice(lines, func(a, b int) bool {
		return len(lines[a]) < len(lines[b]) || len(lines[a]) == len(lines[b]) && lines[a] < lines[b]
	})
	if len(lines) != len(in) || lines[0] != "0" || lines[len(lines)-1] != "499" {
		t.Errorf("%d lines written (first %q); want the %d records", len(lines), lines[:min(3, len(lines))], len(in))
	}
}

// A region of keyed operators sharing a named key (the second fused
// behind the first, with the engine's ownership check) moves as one: no
// record reaches an instance that does not own it, and both operators'
// counts are exact. A second rescale while the first is under way is
// refused.
func TestRescaleNamedKeyRegion(t *testing.T) {
	in := make([]rec, 12000)
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", i%97), TS: int64(i) / 16}
	}
	j := weir.NewJob("region", weir.Workers(4), weir.BatchInterval(20*time.Millisecond), weir.ActiveInstances(1))
	s := weir.Source(j, "src", weir.Paced[rec](weir.SliceSource[rec]{Records: in, BatchSize: 32}, 5000))
	key := func(r rec) string { return r.Key }
	first := weir.Process(weir.KeyBy(s, key, weir.Name("user")), func(k string, n *int, r rec, out []rec) []rec {
		*n++
		r.Val = int64(*n)
		return append(out, r)
	}, weir.Name("first"))
	second := weir.Process(weir.KeyBy(first, key, weir.Name("user")), func(k string, n *int, r rec, out []string) []string {
		*n++
		return append(out, fmt.Sprintf("%s=%d/%d", k, r.Val, *n))
	}, weir.Name("second"))
	out := &weir.Collect[string]{}
	weir.Sink(second, out, weir.Name("out"))
	plan, err := j.Explain()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- j.Run(context.Background()) }()
	for j.Metrics().Records < int64(len(in)/4) {
		time.Sleep(2 * time.Millisecond)
	}
	m, err := j.Rescale(4, weir.PerPair(8))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Rescale(2); err == nil || !strings.Contains(err.Error(), "under way") {
		t.Errorf("a second rescale during the first: %v; want a refusal saying the first is under way", err)
	}
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("%v\n%s", err, plan)
	}
	if !m.Completed() {
		t.Errorf("the job ended before the migration's last step (epoch %d)", m.Last)
	}
	// Each key's n-th record is counted n by both operators, whatever
	// the order of a key's records.
	got := map[string]bool{}
	for _, s := range out.Records() {
		got[s] = true
	}
	n := map[string]int{}
	for _, r := range in {
		n[r.Key]++
		if w := fmt.Sprintf("%s=%d/%d", r.Key, n[r.Key], n[r.Key]); !got[w] {
			t.Fatalf("no output %s among %d (the region's operators saw a key's records apart)", w, len(got))
		}
	}
	if len(got) != len(in) {
		t.Errorf("%d outputs; want %d", len(got), len(in))
	}
}

// A keyed operator that keeps state of its own (KeyedState on a Map)
// cannot have it moved: a rescale is refused, naming it.
func TestRescaleRefusesOwnKeyedState(t *testing.T) {
	j := weir.NewJob("own", weir.Workers(2), weir.BatchInterval(20*time.Millisecond))
	s := weir.Source(j, "src", weir.Paced[rec](weir.SliceSource[rec]{Records: rescaleInput(2000), BatchSize: 32}, 8000))
	// The function stands for one that keeps per-key state in its closure,
	// which is what KeyedState declares.
	m := weir.Map(s, func(r rec) string { return r.Key }, weir.KeyedState("k", func(r rec) string { return r.Key }), weir.Name("mine"))
	weir.Sink(m, &weir.Collect[string]{})
	wantRefusal(t, refusedRescale(t, j, 1), "mine", "KeyedState")
}
