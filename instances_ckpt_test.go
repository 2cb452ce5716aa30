package weir_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/transport"
)

// A process whose instances all wait (its keyed ones own no key group,
// and the source and sink run in process 0) still writes its part of
// each checkpoint, so checkpoints complete: before a rescale gives it
// key groups, and again once a rescale took them back. A crash then
// restores the newest complete checkpoint, and the results of both runs
// are the plain computation's: every key's count goes on from where the
// checkpoint left it, wherever its key group was.
func TestInstancesIdleProcessCheckpoints(t *testing.T) {
	in := coldInput(500, 24000)
	dir := t.TempDir()
	opts := []weir.JobOption{weir.Workers(2), weir.BatchInterval(20 * time.Millisecond), weir.ActiveInstances(2),
		weir.Checkpoints(dir, 2, 4)}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(crash *atomic.Bool) ([]*weir.Job, *weir.Collect[string], []error, chan error) {
		nets := transport.NewLocal(2)
		jobs := make([]*weir.Job, 2)
		var out *weir.Collect[string]
		for i := range jobs {
			jobs[i] = weir.NewJob("idle", append(opts, weir.WithNetwork(nets[i]))...)
			if o := coldJobThrough(jobs[i], in, crashOn(crash)); i == 0 {
				out = o // the sink runs in process 0
			}
		}
		errs, done := runAll(ctx, jobs)
		return jobs, out, errs, done
	}
	var crash atomic.Bool
	jobs, first, errs, done := run(&crash)
	waitRunning(t, done, "a complete checkpoint while process 1 runs no instance", func() bool { return newestCheckpoint(dir) > 0 })
	if n := runningHere(jobs[1].Stats(), 1, "count"); n != 0 {
		t.Fatalf("process 1 runs %d instances of count before the rescale; want none", n)
	}
	rescaleBatched(t, ctx, jobs[1], 4)
	m, err := jobs[0].Rescale(2, weir.WithStrategy(weir.Batched))
	for err != nil && strings.Contains(err.Error(), "ask again") {
		time.Sleep(20 * time.Millisecond)
		m, err = jobs[0].Rescale(2, weir.WithStrategy(weir.Batched))
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, done, "process 1 idle again", func() bool { return runningHere(jobs[1].Stats(), 1, "count") == 0 })
	waitRunning(t, done, fmt.Sprintf("a complete checkpoint after epoch %d, the shrink's last", m.Last), func() bool {
		return newestCheckpoint(dir) > m.Last+2
	})
	crash.Store(true)
	<-done
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "crash") {
		t.Fatalf("process 0: %v; want the crash", errs[0])
	}
	restored := newestCheckpoint(dir)
	t.Logf("the shrink's steps in epochs %d..%d; restoring checkpoint %d", m.First, m.Last, restored)

	jobs, second, errs, done := run(new(atomic.Bool))
	<-done
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("second run: process 0: %v, process 1: %v", errs[0], errs[1])
	}
	if from := jobs[0].Metrics().RestoredFrom; from < restored {
		t.Errorf("the second run restored checkpoint %d; want %d", from, restored)
	}
	got := map[string]bool{}
	for _, r := range append(first.Records(), second.Records()...) {
		got[r] = true
	}
	want := coldWant(in)
	for k := range want {
		if !got[k] {
			t.Errorf("no output %q", k)
		}
	}
	for k := range got {
		if want[k] == 0 {
			t.Errorf("an output %q the plain computation does not give", k)
		}
	}
}
