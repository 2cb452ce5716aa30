package weir_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/checkpoint"
)

// slowFS is the OS's file system with every file written for a
// checkpoint taking delay longer to close, as on a slow disk; it records
// the checkpoints it wrote files for.
type slowFS struct {
	checkpoint.FS
	delay time.Duration
	mu    sync.Mutex
	wrote []uint64
}

func (f *slowFS) CreateTemp(dir, pattern string) (checkpoint.File, error) {
	file, err := f.FS.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	if n, ok := checkpoint.ParseDir(filepath.Base(dir)); ok {
		f.mu.Lock()
		if !slices.Contains(f.wrote, n) {
			f.wrote = append(f.wrote, n)
		}
		f.mu.Unlock()
	}
	return slowFile{file, f.delay}, nil
}

func (f *slowFS) checkpoints() []uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(slices.Values(f.wrote))
}

type slowFile struct {
	checkpoint.File
	delay time.Duration
}

func (s slowFile) Close() error {
	time.Sleep(s.delay)
	return s.File.Close()
}

// In a job of two processes whose checkpoints are due every 40 ms, one
// process writes its parts slowly (150 ms a file). Process 0 then widens
// the stride of the checkpoints and the slow process follows it, so it
// does not hold a copy of its state for every due checkpoint: both end
// with a stride above 1 (with every due checkpoint taken, both stay at
// 1). Checkpoints still complete, and a crash restored from the latest
// gives the plain computation's results.
func TestPacedCheckpoints(t *testing.T) {
	in := rescaleInput(24000)
	want := withoutTTL(rescaleModel(in))
	dir := t.TempDir()
	const every = 2
	fast := &slowFS{FS: checkpoint.OSFS()}
	slow := &slowFS{FS: checkpoint.OSFS(), delay: 150 * time.Millisecond}
	opts := func(i int) []weir.JobOption {
		return []weir.JobOption{weir.Checkpoints(dir, every, 3), weir.CheckpointFS([]*slowFS{fast, slow}[i])}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var crash atomic.Bool
	first := startEach(ctx, in, 2, opts, crashOn(&crash))
	first.await(ctx, int64(len(in))*3/4)
	crash.Store(true)
	first.wg.Wait()
	if err := first.errs[0]; err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("process 0: %v; want the crash", err)
	}
	done := newestCheckpoint(dir)
	if done == 0 {
		t.Fatal("no checkpoint completed")
	}
	took := fast.checkpoints()
	if len(took) < 4 {
		t.Fatalf("process 0 wrote parts of %d checkpoints", len(took))
	}
	// Both processes follow a stride above 1 by the end.
	for i, j := range first.jobs {
		if st := weir.CheckpointStride(j); st < 2 {
			t.Errorf("process %d takes every %d-th due checkpoint at the end; want a wider stride", i, st)
		}
	}
	t.Logf("strides %d and %d; process 0 wrote %d parts, the slow one %d; newest complete %d",
		weir.CheckpointStride(first.jobs[0]), weir.CheckpointStride(first.jobs[1]), len(took), len(slow.checkpoints()), done)

	second := startLeave(ctx, in, 2, []weir.JobOption{weir.Checkpoints(dir, every, 3)}, crashOn(new(atomic.Bool)))
	second.wg.Wait()
	for i, err := range second.errs {
		if err != nil {
			t.Fatalf("second run, process %d: %v", i, err)
		}
	}
	if from := second.jobs[0].Metrics().RestoredFrom; from < done {
		t.Errorf("the second run restored checkpoint %d, before the newest complete %d", from, done)
	}
	checkOps(t, second.outs[0].Records(), want)
}
