package weir_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

func runErr(t *testing.T, j *weir.Job) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return j.Run(ctx)
}

func fissionInput(n int) []frec {
	in := make([]frec, n)
	for i := range in {
		in[i] = frec{ID: i, Key: i % 37, Val: int64(i % 11)}
	}
	return in
}

// Two keyed operators that share a key name share a region, and the
// engine checks on every record that the key really flowed through: a map
// in between that changes it fails the job, naming the key.
func TestSharedKeyNameIsChecked(t *testing.T) {
	for _, change := range []bool{false, true} {
		j := weir.NewJob("shared-key", weir.Workers(4))
		s := weir.Source(j, "src", weir.SliceSource[frec]{Records: fissionInput(2000)})
		byKey := func(r frec) int { return r.Key }
		first := weir.Process(weir.KeyBy(s, byKey, weir.Name("key")), func(_ int, n *int64, r frec, out []frec) []frec {
			*n++
			return append(out, r)
		})
		moved := weir.Map(first, func(r frec) frec {
			if change {
				r.Key += 1000
			}
			return r
		}, weir.Stateless())
		second := weir.Process(weir.KeyBy(moved, byKey, weir.Name("key")), func(_ int, n *int64, r frec, out []frec) []frec {
			*n++
			return append(out, r)
		})
		out := &weir.Collect[frec]{}
		weir.Sink(second, out)
		plan, _ := j.Explain()
		if strings.Count(plan, "<- keygroup") != 1 {
			t.Fatalf("want one key-group exchange, the second keyed operator fused:\n%s", plan)
		}
		err := runErr(t, j)
		switch {
		case change && (err == nil || !strings.Contains(err.Error(), "the key changed")):
			t.Errorf("changed key: Run = %v; want an error saying the key changed", err)
		case !change && err != nil:
			t.Errorf("unchanged key: Run = %v", err)
		case !change && len(out.Records()) != 2000:
			t.Errorf("unchanged key: %d records; want 2000", len(out.Records()))
		}
	}
}

// A declared selectivity is checked on every record.
func TestSelectivityIsChecked(t *testing.T) {
	j := weir.NewJob("selectivity", weir.Workers(2))
	s := weir.Source(j, "src", weir.SliceSource[frec]{Records: fissionInput(100)})
	twice := weir.FlatMap(s, func(r frec, out []frec) []frec {
		if r.ID == 42 {
			out = append(out, r)
		}
		return append(out, r)
	}, weir.Name("twice"), weir.Stateless(), weir.Selectivity(weir.ExactlyOne))
	weir.Sink(twice, &weir.Collect[frec]{})
	err := runErr(t, j)
	if err == nil || !strings.Contains(err.Error(), "twice declared 1:1 outputs per input but made 2") {
		t.Errorf("Run = %v; want the broken declaration named", err)
	}
}

// Declarations the planner cannot honour safely are refused before the
// job starts.
func TestUnsafeDeclarationsRefused(t *testing.T) {
	cases := []struct {
		name  string
		build func(j *weir.Job)
		want  string
	}{
		{"stateful in two instances", func(j *weir.Job) {
			s := weir.Source(j, "src", weir.SliceSource[frec]{Records: fissionInput(10)})
			weir.Sink(weir.Map(s, fmapFn, weir.Stateful(), weir.Parallelism(2), weir.Name("count")), &weir.Collect[frec]{})
		}, "count keeps unkeyed state and cannot run in 2 instances"},
		{"undeclared in two instances", func(j *weir.Job) {
			s := weir.Source(j, "src", weir.SliceSource[frec]{Records: fissionInput(10)})
			weir.Sink(weir.Map(s, fmapFn, weir.Parallelism(2), weir.Name("undeclared")), &weir.Collect[frec]{})
		}, "undeclared keeps unkeyed state"},
		{"key of another type", func(j *weir.Job) {
			s := weir.Source(j, "src", weir.SliceSource[frec]{Records: fissionInput(10)})
			weir.Sink(weir.Map(s, fmapFn, weir.KeyedState("id", func(n int) int { return n })), &weir.Collect[frec]{})
		}, "its key takes int, but its input is weir_test.frec"},
		{"ordered with a parallel source", func(j *weir.Job) {
			s := weir.Source(j, "src", weir.SliceSource[frec]{Records: fissionInput(10)}, weir.Parallelism(2))
			weir.Sink(s, &weir.Collect[frec]{})
		}, "ordered job reads each source in one instance"},
	}
	for _, c := range cases {
		j := weir.NewJob("unsafe", weir.Workers(4), weir.Ordered())
		c.build(j)
		if err := runErr(t, j); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Run = %v; want an error containing %q", c.name, err, c.want)
		}
	}
}

// In an ordered job, a window's results have no order to keep: the
// window's region takes its input through its own exchange, and what
// follows it is planned without order. The results are still exact.
func TestOrderedJobWithWindow(t *testing.T) {
	in := fissionInput(5000)
	for i := range in {
		in[i].Seq = int64(i) // event time, increasing
	}
	j := weir.NewJob("ordered-window", weir.Workers(3), weir.Ordered(), weir.EpochRecords(300))
	s := weir.Source(j, "src", weir.SliceSource[frec]{Records: in, BatchSize: 50})
	kept := weir.Filter(s, ffilterFn, weir.Stateless())
	timed := weir.EventTime(kept, func(r frec) int64 { return r.Seq }, 0)
	counts := weir.Count(weir.Window(weir.KeyBy(timed, func(r frec) int { return r.Key }), weir.Tumbling(time.Second)))
	out := &weir.Collect[weir.WindowResult[int, int64]]{}
	weir.Sink(counts, out)
	plan, _ := j.Explain()
	if !strings.Contains(plan, "ordered from src") || !strings.Contains(plan, "<- gather from") {
		t.Errorf("want an ordered split before the window and a plain gather after it:\n%s", plan)
	}
	if err := runErr(t, j); err != nil {
		t.Fatal(err)
	}
	want := map[[2]int64]int64{}
	for _, r := range in {
		if ffilterFn(r) {
			want[[2]int64{int64(r.Key), r.Seq / 1000 * 1000}]++
		}
	}
	got := map[[2]int64]int64{}
	for _, r := range out.Records() {
		got[[2]int64{int64(r.Key), r.Start}] += r.Value
	}
	if len(got) != len(want) {
		t.Fatalf("%d windows; want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("window %v: %d; want %d", k, got[k], v)
		}
	}
}

// A region's parallelism follows the workers, and with Ordered the
// output is the same list at every parallelism.
func TestOrderedSameAtEveryParallelism(t *testing.T) {
	in := fissionInput(4000)
	stages := []fstage{{kind: "flatmap"}, {kind: "process", key: 1}, {kind: "filter"}, {kind: "keyedstate"}, {kind: "map"}}
	want := fissionReference(in, stages, true)
	for w := 1; w <= 8; w++ {
		j := weir.NewJob("ordered", weir.Workers(w), weir.Ordered(), weir.BatchSize(7))
		out := fissionJob(j, in, stages, true, 13, make([]exclusive, len(stages)))
		if err := runErr(t, j); err != nil {
			t.Fatal(err)
		}
		if got := out.Records(); !slices.Equal(got, want) {
			t.Errorf("workers %d: %d records, first difference at %d of %d", w, len(got), firstDiff(got, want), len(want))
		}
	}
}
