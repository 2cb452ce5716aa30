package weir_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// splitsCrashJob counts in per key and window over 4 workers with
// checkpoints at every epoch in dir; its source's fused chain panics once
// crash is set.
func splitsCrashJob(in []rec, crash *atomic.Bool, opts ...weir.JobOption) (*weir.Job, *weir.Collect[weir.WindowResult[string, int64]]) {
	j := weir.NewJob("splits-crash", append([]weir.JobOption{weir.Workers(4), weir.BatchInterval(20 * time.Millisecond)}, opts...)...)
	s := weir.Source(j, "src", weir.Paced[rec](weir.SliceSource[rec]{Records: in, BatchSize: 32}, 8000))
	s = weir.Map(s, func(r rec) rec {
		if crash.Load() {
			panic("crash")
		}
		return r
	}, weir.Stateless(), weir.Name("crash"))
	return j, splitsCounts(s)
}

// checkpointDir is the directory of checkpoint n in dir.
func checkpointDir(t *testing.T, dir string, n uint64) string {
	t.Helper()
	d := filepath.Join(dir, fmt.Sprintf("chk-%012d", n))
	if _, err := os.Stat(filepath.Join(d, "MANIFEST")); err != nil {
		t.Fatalf("checkpoint %d is not complete: %v", n, err)
	}
	return d
}

// A job whose sources moved from 4 shares to 2 crashes after a
// checkpoint that follows the move; restarted, it reads its input in the
// 2 shares the checkpoint recorded (its instances 2 and 3 read nothing),
// and its results are the plain loop's. Started instead from the
// checkpoint at the epoch before the move (the move scheduled, not yet
// in force), it carries the move out before it reads; from a checkpoint
// before that, as it passes the move's epoch; and with 3 workers from the
// checkpoint after the move, it splits what the 2 shares left over 3.
func TestSplitsRestore(t *testing.T) {
	in := rescaleInput(12000)
	want := plainCounts(in)
	// A job of one process skips a due checkpoint while its store is busy
	// with the one before (as Flink takes one at a time), and the cases
	// below need the one at the epoch before the move: a run that skipped
	// it is run again.
	var dir string
	var f uint64
	for attempt := 1; ; attempt++ {
		dir, f = splitsCrashRun(t, in)
		if complete(dir, f-1) || attempt == 3 {
			break
		}
		t.Logf("run %d skipped checkpoint %d, at the epoch before the move: running again", attempt, f-1)
	}
	ckpt := weir.Checkpoints(dir, 1, 1000)
	// The checkpoints before the move, newest first: at the epoch before
	// it, every source instance ended that epoch with a marker of its own.
	before := []uint64{f - 1}
	for n := f - 2; n+3 > f && n > 0; n-- {
		if complete(dir, n) {
			before = append(before, n)
			break
		}
	}
	restart := func(t *testing.T, opts ...weir.JobOption) (*weir.Job, *weir.Collect[weir.WindowResult[string, int64]]) {
		t.Helper()
		j, out := splitsCrashJob(in, new(atomic.Bool), opts...)
		if err := j.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if j.Metrics().RestoredFrom == 0 {
			t.Fatal("no checkpoint restored")
		}
		if got := j.Metrics().Records; got != int64(len(in)) {
			t.Errorf("%d records read, before the checkpoint and after; want %d", got, len(in))
		}
		if late := j.Metrics().Late; late != 0 {
			t.Errorf("%d late records", late)
		}
		checkCounts(t, out.Records(), want)
		return j, out
	}
	for _, n := range before {
		t.Run(fmt.Sprintf("from checkpoint %d, the move at %d", n, f), func(t *testing.T) {
			j, _ := restart(t, weir.Checkpoints(t.TempDir(), 1, 3), weir.FromCheckpoint(checkpointDir(t, dir, n)))
			reads := sourceReads(j.Stats(), "src", 0)
			if n == f-1 && reads[2]+reads[3] != 0 {
				t.Errorf("instances 2 and 3 read %d and %d records; the move was before the first read", reads[2], reads[3])
			}
		})
	}
	t.Run("3 workers after the move", func(t *testing.T) {
		chk := checkpointDir(t, dir, newestCheckpoint(dir))
		restart(t, weir.Workers(3), weir.Checkpoints(t.TempDir(), 1, 3), weir.FromCheckpoint(chk))
	})
	t.Run("after the move", func(t *testing.T) {
		j, _ := restart(t, ckpt)
		reads := sourceReads(j.Stats(), "src", 0)
		if reads[2]+reads[3] != 0 {
			t.Errorf("instances 2 and 3 read %d and %d records; the checkpoint has 2 shares, read by instances 0 and 1", reads[2], reads[3])
		}
		if reads[0]+reads[1] == 0 {
			t.Error("instances 0 and 1 read nothing")
		}
	})
}

// splitsCrashRun runs splitsCrashJob over in with a checkpoint at every
// epoch, moves its sources from 4 shares to 2, and crashes it after a
// checkpoint that follows the move. It returns the checkpoint directory
// and the move's first epoch.
func splitsCrashRun(t *testing.T, in []rec) (string, uint64) {
	t.Helper()
	dir := t.TempDir()
	var crash atomic.Bool
	var completed atomic.Uint64
	first, _ := splitsCrashJob(in, &crash, weir.Checkpoints(dir, 1, 1000), weir.OnEpoch(func(s weir.EpochStats) { completed.Store(s.Epoch) }))
	done := make(chan error, 1)
	go func() { done <- first.Run(context.Background()) }()
	waitRecords(t, first, 2000, done)
	m, err := first.Rescale(2, weir.WithStrategy(weir.AllAtOnce))
	if err != nil {
		t.Fatal(err)
	}
	f := m.First
	for completed.Load() <= f || newestCheckpoint(dir) <= f {
		select {
		case err := <-done:
			t.Fatalf("the job ended (%v) before a checkpoint after the move", err)
		case <-time.After(2 * time.Millisecond):
		}
	}
	crash.Store(true)
	if err := <-done; err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("first run: %v; want the crash", err)
	}
	return dir, f
}

// complete reports whether checkpoint n in dir is complete.
func complete(dir string, n uint64) bool {
	_, err := os.Stat(filepath.Join(dir, fmt.Sprintf("chk-%012d", n), "MANIFEST"))
	return err == nil
}
