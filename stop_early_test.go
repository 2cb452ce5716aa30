package weir_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/internal/transport"
)

// A Stop before Run takes effect once the job runs: at once without
// checkpoints, at the first checkpoint with them.
func TestStopBeforeRun(t *testing.T) {
	in, _ := stopInput()
	for _, ck := range []bool{false, true} {
		opts := []weir.JobOption{weir.Workers(2), weir.EpochRecords(300)}
		if ck {
			opts = append(opts, weir.Checkpoints(t.TempDir(), 3, 2))
		}
		j := weir.NewJob("early", opts...)
		checkpointedCount(j, in, 40000)
		j.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := j.Run(ctx)
		cancel()
		if !errors.Is(err, weir.ErrStopped) {
			t.Errorf("checkpoints %v: Run = %v; want ErrStopped", ck, err)
		}
		if ck && j.Metrics().StoppedAt == 0 {
			t.Errorf("checkpoints %v: stopped at no checkpoint", ck)
		}
	}
}

// Every process of a distributed job told to stop before it runs (as
// launch does to all at once) stops, with or without checkpoints.
func TestStopDistributedBeforeRun(t *testing.T) {
	in, _ := stopInput()
	for _, ck := range []bool{false, true} {
		const procs = 2
		nets := transport.NewLocal(procs)
		closed := make(chan struct{})
		close(closed)
		opts := []weir.JobOption{weir.Workers(1), weir.EpochRecords(200), weir.StopOn(closed)}
		if ck {
			opts = append(opts, weir.Checkpoints(t.TempDir(), 3, 2))
		}
		errs := make([]error, procs)
		var wg sync.WaitGroup
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		for i := range procs {
			j := weir.NewJob("dist", append(slices.Clone(opts), weir.WithNetwork(nets[i]))...)
			checkpointedCount(j, in, 30000)
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = j.Run(ctx) }()
		}
		wg.Wait()
		cancel()
		for i, err := range errs {
			if !errors.Is(err, weir.ErrStopped) {
				t.Errorf("checkpoints %v: process %d: %v; want ErrStopped", ck, i, err)
			}
		}
	}
}

// The same file named relatively, then absolutely, is the same job: the
// second run resumes the first's checkpoints.
func TestCheckpointDirPathSpelling(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "w%d x y\n", i%50)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	ckpt := filepath.Join(dir, "ckpt")
	build := func(path string) (*weir.Job, *weir.Collect[string]) {
		j := weir.NewJob("wc", weir.Workers(1), weir.BatchInterval(50*time.Millisecond), weir.Checkpoints(ckpt, 1, 2))
		s := weir.Source(j, "lines", weir.Paced(file.Lines([]string{path}, file.Options{}), 20000))
		out := &weir.Collect[string]{}
		weir.Sink(s, out, weir.Name("out"))
		return j, out
	}
	first, _ := build("in.txt")
	stopPartway(t, first, 600*time.Millisecond)
	second, out := build(filepath.Join(dir, "in.txt"))
	if err := second.Run(context.Background()); err != nil {
		t.Fatalf("the same file named absolutely: %v", err)
	}
	if second.Metrics().RestoredFrom == 0 {
		t.Error("the second run did not resume")
	}
	if n := len(out.Records()); n != 20000 {
		t.Errorf("%d lines out, want 20000", n)
	}
}
