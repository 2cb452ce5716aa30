package weir_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// crashingCount is a windowed count of in whose first run fails at the
// record with ID crashAt (-1: never).
func crashingCount(j *weir.Job, in []rec, crashAt int) *weir.Collect[weir.WindowResult[string, int64]] {
	return crashingCountIn(j, in, crashAt, "")
}

// crashingCountIn is crashingCount that, given the checkpoint directory,
// crashes only once a checkpoint there is complete (or 10 s have passed),
// so that the restart has one to restore however loaded the machine is.
func crashingCountIn(j *weir.Job, in []rec, crashAt int, ckptDir string) *weir.Collect[weir.WindowResult[string, int64]] {
	s := weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 64})
	s = weir.Map(s, func(r rec) rec {
		if r.ID == crashAt {
			for end := time.Now().Add(10 * time.Second); ckptDir != "" && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
				if done, _ := filepath.Glob(filepath.Join(ckptDir, "chk-*", "MANIFEST")); len(done) > 0 {
					break
				}
			}
			panic("crash")
		}
		return r
	}, weir.Stateless(), weir.Name("crash"))
	timed := weir.EventTime(s, func(r rec) int64 { return r.TS }, 10*time.Millisecond, weir.Name("time"))
	counts := weir.Count(weir.Window(weir.KeyBy(timed, func(r rec) string { return r.Key }), weir.Tumbling(50*time.Millisecond),
		weir.WindowOptions(weir.Name("count"))))
	out := &weir.Collect[weir.WindowResult[string, int64]]{}
	weir.Sink(counts, out, weir.Name("out"))
	return out
}

func countsOf(rs []weir.WindowResult[string, int64]) map[string]int64 {
	m := map[string]int64{}
	for _, r := range rs {
		m[fmt.Sprintf("%s@%d", r.Key, r.Start)] += r.Value
	}
	return m
}

// A job that crashed with one worker count, or process count, restarts
// from its checkpoint with another and gives the uninterrupted result:
// key groups are redistributed and the sources' unread records are split
// over the new readers.
func TestRescaleFromCheckpoint(t *testing.T) {
	in := make([]rec, 24000)
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", i%29), TS: int64(i) / 16}
	}
	want := map[string]int64{}
	for _, r := range in {
		want[fmt.Sprintf("%s@%d", r.Key, r.TS/50*50)]++
	}
	check := func(desc string, got map[string]int64) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %d windows; want %d", desc, len(got), len(want))
			return
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: window %s counted %d; want %d", desc, k, got[k], v)
				return
			}
		}
	}
	for _, c := range []struct{ before, after int }{{2, 3}, {3, 1}, {1, 4}} {
		dir := t.TempDir()
		opts := func(w int) []weir.JobOption {
			return []weir.JobOption{weir.Workers(w), weir.EpochRecords(150), weir.Checkpoints(dir, 2, 2)}
		}
		first := weir.NewJob("first", opts(c.before)...)
		crashingCount(first, in, 22000)
		if err := runErr(t, first); err == nil || !strings.Contains(err.Error(), "crash") {
			t.Fatalf("workers %d: first run: %v; want the crash", c.before, err)
		}
		second := weir.NewJob("second", opts(c.after)...)
		out := crashingCount(second, in, -1)
		if err := runErr(t, second); err != nil {
			t.Fatalf("workers %d -> %d: %v", c.before, c.after, err)
		}
		if second.Metrics().RestoredFrom == 0 {
			t.Fatalf("workers %d -> %d: no checkpoint restored", c.before, c.after)
		}
		check(fmt.Sprintf("workers %d -> %d", c.before, c.after), countsOf(out.Records()))
	}
	// Two processes, then three.
	dir := t.TempDir()
	opts := []weir.JobOption{weir.Workers(1), weir.EpochRecords(150), weir.Checkpoints(dir, 2, 2)}
	_, errs := runProcesses(t, 2, opts, func(j *weir.Job) *weir.Collect[weir.WindowResult[string, int64]] {
		return crashingCount(j, in, 22000)
	})
	if errs[0] == nil && errs[1] == nil {
		t.Fatal("2 processes: the first run did not crash")
	}
	got, errs := runProcesses(t, 3, opts, func(j *weir.Job) *weir.Collect[weir.WindowResult[string, int64]] {
		return crashingCount(j, in, -1)
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("3 processes: process %d: %v", i, err)
		}
	}
	check("2 -> 3 processes", countsOf(got))
}
