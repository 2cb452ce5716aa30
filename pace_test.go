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
// process writes its parts slowly (150 ms each). The processes then take
// fewer checkpoints, all the same ones: process 0 widens their stride and
// the slow process follows, so it does not hold a copy of its state for
// every due checkpoint. Checkpoints still complete, and a crash restored
// from the latest gives the plain computation's results.
func TestPacedCheckpoints(t *testing.T) {
	in := rescaleInput(16000)
	want := withoutTTL(rescaleModel(in))
	dir := t.TempDir()
	const every = 2
	slow := &slowFS{FS: checkpoint.OSFS(), delay: 150 * time.Millisecond}
	opts := func(i int) []weir.JobOption {
		o := []weir.JobOption{weir.Checkpoints(dir, every, 3)}
		if i == 1 {
			o = append(o, weir.CheckpointFS(slow))
		}
		return o
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var crash atomic.Bool
	first := startEach(ctx, in, 2, opts, crashOn(&crash))
	first.await(ctx, int64(len(in))*2/3)
	crash.Store(true)
	first.wg.Wait()
	if err := first.errs[0]; err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("process 0: %v; want the crash", err)
	}
	done := newestCheckpoint(dir)
	if done == 0 {
		t.Fatal("no checkpoint completed")
	}
	wrote := slow.checkpoints()
	if len(wrote) < 3 {
		t.Fatalf("the slow process wrote parts of %d checkpoints", len(wrote))
	}
	due := (wrote[len(wrote)-1]-wrote[0])/every + 1
	t.Logf("the slow process wrote parts of %d checkpoints of the %d due from its first to its last; newest complete %d", len(wrote), due, done)
	if uint64(len(wrote))*2 > due {
		t.Errorf("the slow process took %d of %d due checkpoints; want at most half", len(wrote), due)
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
