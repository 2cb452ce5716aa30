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
// process writes its parts slowly (150 ms a file). The processes then
// take fewer checkpoints, all the same ones: process 0 widens their
// stride and the slow process follows, so it does not hold a copy of its
// state for every due checkpoint. What process 0 writes shows which they
// take (it writes at full speed; the slow one writes the same ones, later,
// once the checkpoints it took before the first change, 1.5 s after the
// first part written, are written). Checkpoints still complete, and a
// crash restored from the latest gives the plain computation's results.
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
	// The second half of the run, long after the first change.
	half := took[0] + (took[len(took)-1]-took[0])/2
	late := slices.DeleteFunc(slices.Clone(took), func(n uint64) bool { return n < half })
	due := (late[len(late)-1]-late[0])/every + 1
	t.Logf("in the second half of the run the processes took %d of %d due checkpoints; the slow one wrote %d in all; newest complete %d",
		len(late), due, len(slow.checkpoints()), done)
	if uint64(len(late))*2 > due {
		t.Errorf("in the second half of the run the processes took %d of %d due checkpoints; want at most half", len(late), due)
	}

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
