package weir_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/transport"
)

// syncBuffer is a log destination several goroutines write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Processes whose checkpoint directories are not shared never complete a
// checkpoint: each says so within a few of its peers' summaries, and their
// directories do not pile up past what they keep.
func TestCheckpointDirNotShared(t *testing.T) {
	const procs, keep = 2, 2
	nets := transport.NewLocal(procs)
	logs := make([]*syncBuffer, procs)
	dirs := make([]string, procs)
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in := ckptInput(40000)
	for i := range procs {
		logs[i], dirs[i] = &syncBuffer{}, t.TempDir()
		j := weir.NewJob("unshared", weir.Workers(1), weir.EpochRecords(100), weir.Checkpoints(dirs[i], 1, keep),
			weir.Logger(slog.New(slog.NewTextHandler(logs[i], nil))), weir.WithNetwork(nets[i]))
		checkpointedCount(j, in, 15000)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := j.Run(ctx); err != nil {
				t.Errorf("process %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	for i := range procs {
		if !strings.Contains(logs[i].String(), "must be shared by every process") {
			t.Errorf("process %d logged no warning about its unshared directory:\n%s", i, logs[i].String())
		}
		if c := completeCkpts(t, dirs[i]); len(c) != 0 {
			t.Errorf("process %d: checkpoints %v complete without the other's parts", i, c)
		}
		ents, _ := filepath.Glob(filepath.Join(dirs[i], "chk-*"))
		if len(ents) > keep+2 {
			t.Errorf("process %d: %d checkpoint directories left; want at most %d", i, len(ents), keep+2)
		}
		if len(ents) == 0 {
			t.Errorf("process %d wrote no checkpoint", i)
		}
	}
}
