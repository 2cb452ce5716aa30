package weir_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/checkpoint"
)

// A distributed job stopped while its checkpoints' parts are written
// slowly (a checkpoint due every epoch, each file 40 ms to close) has
// parts of later checkpoints queued when it stops; those written as the
// processes shut down may complete one more checkpoint. Every process
// then says it stopped at the newest complete checkpoint in the
// directory, the one the next run resumes from.
func TestStopReportsNewestComplete(t *testing.T) {
	in := rescaleInput(8000)
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			opts := func(int) []weir.JobOption {
				return []weir.JobOption{weir.Checkpoints(dir, 1, 3),
					weir.CheckpointFS(&slowFS{FS: checkpoint.OSFS(), delay: 40 * time.Millisecond})}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			r := startEach(ctx, in, 2, opts, nil)
			r.await(ctx, int64(len(in))/4+int64(round)*300)
			r.jobs[round%2].Stop()
			r.wg.Wait()
			store, err := checkpoint.Open(checkpoint.OSFS(), dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			newest, ok, err := store.NewestComplete()
			if err != nil || !ok {
				t.Fatalf("no complete checkpoint (%v)", err)
			}
			for i, j := range r.jobs {
				if !errors.Is(r.errs[i], weir.ErrStopped) {
					t.Fatalf("process %d: %v; want ErrStopped", i, r.errs[i])
				}
				if at := j.Metrics().StoppedAt; at != newest {
					t.Errorf("process %d stopped at checkpoint %d; the newest complete is %d", i, at, newest)
				}
			}
		})
	}
}
