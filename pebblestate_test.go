package weir_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/pebblestate"
)

// State kept in Pebble gives the results of state kept in memory: windows
// (fired from disk) and Process, and a restart from a checkpoint.
func TestPebbleState(t *testing.T) {
	in := make([]rec, 12000)
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", i%37), TS: int64(i) / 8, Val: int64(i % 5)}
	}
	dir := t.TempDir()
	build := func(j *weir.Job, crashAt int) (*weir.Collect[weir.WindowResult[string, int64]], *weir.Collect[string]) {
		counts := crashingCountIn(j, in, crashAt, filepath.Join(dir, "ckpt"))
		s := weir.Source(j, "src2", weir.SliceSource[rec]{Records: in, BatchSize: 64})
		// Counts per key every 50 records: the outputs do not depend on
		// the order in which a key's records meet.
		totals := weir.Process(weir.KeyBy(s, func(r rec) string { return r.Key }), func(k string, n *int64, r rec, out []string) []string {
			if *n++; *n%50 == 0 {
				out = append(out, fmt.Sprintf("%s=%d", k, *n))
			}
			return out
		}, weir.Name("totals"))
		out := &weir.Collect[string]{}
		weir.Sink(totals, out, weir.Name("totals-out"))
		return counts, out
	}
	mem := weir.NewJob("memory", weir.Workers(2), weir.EpochRecords(200))
	wantCounts, wantTotals := build(mem, -1)
	if err := runErr(t, mem); err != nil {
		t.Fatal(err)
	}
	opts := []weir.JobOption{weir.Workers(2), weir.EpochRecords(200), pebblestate.Dir(filepath.Join(dir, "state")), weir.Checkpoints(filepath.Join(dir, "ckpt"), 2, 2)}
	first := weir.NewJob("first", opts...)
	build(first, 11000)
	if err := runErr(t, first); err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("first run: %v; want the crash", err)
	}
	second := weir.NewJob("second", opts...)
	gotCounts, gotTotals := build(second, -1)
	if err := runErr(t, second); err != nil {
		t.Fatal(err)
	}
	if second.Metrics().RestoredFrom == 0 {
		t.Fatal("no checkpoint restored")
	}
	for _, op := range []string{"count", "totals"} {
		if dbs, _ := filepath.Glob(filepath.Join(dir, "state", op+"-*", "*.log")); len(dbs) == 0 {
			t.Errorf("no Pebble database of %s under %s", op, filepath.Join(dir, "state"))
		}
	}
	w, g := countsOf(wantCounts.Records()), countsOf(gotCounts.Records())
	if len(g) != len(w) {
		t.Errorf("%d windows; want %d", len(g), len(w))
	}
	for k, v := range w {
		if g[k] != v {
			t.Errorf("window %s: %d; want %d", k, g[k], v)
			break
		}
	}
	a, b := sortedStrings(wantTotals.Records()), sortedStrings(gotTotals.Records())
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("Process outputs differ: %d vs %d", len(b), len(a))
	}
}

func sortedStrings(s []string) []string {
	slices.Sort(s)
	return s
}

// Two keyed operators of one name cannot keep their state in one backend
// (their stores would be one): the job is refused before it runs.
func TestPebbleRefusesOneNameTwice(t *testing.T) {
	j := weir.NewJob("names", weir.Workers(2), pebblestate.Dir(t.TempDir()))
	s := weir.Source(j, "src", weir.SliceSource[rec]{Records: []rec{{ID: 1, Key: "a"}}})
	for range 2 {
		n := weir.Process(weir.KeyBy(s, func(r rec) string { return r.Key }), func(_ string, n *int, _ rec, out []int) []int {
			*n++
			return append(out, *n)
		}, weir.Name("agg"))
		weir.Sink(n, &weir.Collect[int]{})
	}
	err := j.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), `"agg" and "agg"`) || !strings.Contains(err.Error(), "name them apart") {
		t.Fatalf("Run: %v; want a refusal naming agg twice", err)
	}
}
