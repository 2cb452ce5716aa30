package weir_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/transport"
)

func stopInput() ([]rec, map[string]int64) {
	in := make([]rec, 30000)
	want := map[string]int64{}
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", i%7), TS: int64(i) / 20}
		want[fmt.Sprintf("k%d@%d", i%7, in[i].TS/100*100)]++
	}
	return in, want
}

func windowsOf(out *weir.Collect[weir.WindowResult[string, int64]]) map[string]int64 {
	got := map[string]int64{}
	for _, w := range out.Records() {
		got[fmt.Sprintf("%s@%d", w.Key, w.Start)] += w.Value
	}
	return got
}

func sameWindows(t *testing.T, what string, got, want map[string]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d windows, want %d", what, len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: window %s counts %d, want %d", what, k, got[k], v)
			return
		}
	}
}

// Stop takes the job to a checkpoint and ends it without flushing its
// windows; the next run resumes from there, and the result is exactly
// that of a run never stopped.
func TestStopAtCheckpoint(t *testing.T) {
	in, want := stopInput()
	dir := t.TempDir()
	opts := []weir.JobOption{weir.Workers(2), weir.EpochRecords(300), weir.Checkpoints(dir, 3, 2)}
	stop := make(chan struct{})
	first := weir.NewJob("first", append(opts, weir.StopOn(stop))...)
	out1 := checkpointedCount(first, in, 40000)
	time.AfterFunc(300*time.Millisecond, func() { close(stop) })
	err := first.Run(context.Background())
	if !errors.Is(err, weir.ErrStopped) {
		t.Fatalf("stopped run: %v; want ErrStopped", err)
	}
	at := first.Metrics().StoppedAt
	if at == 0 {
		t.Fatal("the stopped run names no checkpoint it stopped at")
	}
	if n := len(out1.Records()); n >= len(want) {
		t.Errorf("the stopped run emitted %d windows: it flushed them as at the end", n)
	}
	second := weir.NewJob("second", opts...)
	out2 := checkpointedCount(second, in, 1e9)
	if err := second.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := second.Metrics().RestoredFrom; got != at {
		t.Errorf("resumed from checkpoint %d, want %d (where the first run stopped)", got, at)
	}
	if got := second.Metrics().Records; got != int64(len(in)) {
		t.Errorf("the resumed run counts %d records read, want %d (with those read before the checkpoint)", got, len(in))
	}
	sameWindows(t, "stopped and resumed", windowsOf(out2), want)
}

// Without checkpoints Stop ends the job at once.
func TestStopWithoutCheckpoints(t *testing.T) {
	in, _ := stopInput()
	j := weir.NewJob("nock", weir.Workers(2), weir.EpochRecords(300))
	checkpointedCount(j, in, 20000)
	time.AfterFunc(100*time.Millisecond, j.Stop)
	start := time.Now()
	if err := j.Run(context.Background()); !errors.Is(err, weir.ErrStopped) {
		t.Fatalf("Run = %v; want ErrStopped", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("stopped after %v", d)
	}
}

// One process of a distributed job asked to stop stops them all at the
// same checkpoint; the job resumed from it gives the result of a run
// never stopped.
func TestStopDistributed(t *testing.T) {
	in, want := stopInput()
	const procs = 3
	dir := t.TempDir()
	opts := []weir.JobOption{weir.Workers(1), weir.EpochRecords(200), weir.Checkpoints(dir, 3, 2)}
	run := func(stopOne bool) ([]*weir.Job, []error, *weir.Collect[weir.WindowResult[string, int64]]) {
		nets := transport.NewLocal(procs)
		jobs := make([]*weir.Job, procs)
		errs := make([]error, procs)
		var out *weir.Collect[weir.WindowResult[string, int64]]
		var wg sync.WaitGroup
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for i := range procs {
			rate := 1e9
			if stopOne {
				rate = 30000
			}
			jobs[i] = weir.NewJob("dist", append(slices.Clone(opts), weir.WithNetwork(nets[i]))...)
			o := checkpointedCount(jobs[i], in, rate)
			if i == 0 {
				out = o
			}
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = jobs[i].Run(ctx) }()
		}
		if stopOne {
			time.AfterFunc(400*time.Millisecond, jobs[1].Stop)
		}
		wg.Wait()
		return jobs, errs, out
	}
	jobs, errs, _ := run(true)
	at := jobs[0].Metrics().StoppedAt
	for i, err := range errs {
		if !errors.Is(err, weir.ErrStopped) {
			t.Fatalf("process %d: %v; want ErrStopped", i, err)
		}
		if got := jobs[i].Metrics().StoppedAt; got != at || got == 0 {
			t.Errorf("process %d stopped at checkpoint %d, process 0 at %d", i, got, at)
		}
	}
	jobs, errs, out := run(false)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("resumed run: process %d: %v", i, err)
		}
	}
	if got := jobs[0].Metrics().RestoredFrom; got != at {
		t.Errorf("resumed from %d, want %d", got, at)
	}
	for i, j := range jobs {
		if got := j.Metrics().Records; got != int64(len(in)) {
			t.Errorf("process %d of the resumed job counts %d records read, want %d", i, got, len(in))
		}
	}
	sameWindows(t, "distributed, stopped and resumed", windowsOf(out), want)
}
