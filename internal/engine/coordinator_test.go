package engine

import (
	"log/slog"
	"testing"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/op"
	"github.com/weirstream/weir/internal/progress"
)

// Two processes take checkpoint 4 at their first markers at or after it:
// one at epoch 4, one whose marker jumped to 5. Each task reports through
// its reporter to its process's checkpoint service; their parts still
// agree (both name epoch 4), and the checkpoint completes, as the second
// process's service finds.
func TestPartsAgreeAcrossMarkerEpochs(t *testing.T) {
	dir := t.TempDir()
	run := func(self int, epoch progress.Epoch) *coordinator {
		st, err := checkpoint.Open(checkpoint.OSFS(), dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &coordinator{store: st, every: 2, keep: 3, self: self, procs: 2, groups: 128, log: slog.Default()}
		r := &reporter{c: c}
		r.id = c.join()
		done := make(chan struct{})
		c.open(done)
		if err := r.after(progress.Marker{Epoch: epoch}); err != nil {
			t.Fatal(err)
		}
		if r.last != 4 {
			t.Fatalf("process %d took checkpoint %d at epoch %d; want 4", self, r.last, epoch)
		}
		close(done)
		if err := c.serve(done); err != nil {
			t.Fatal(err)
		}
		if w := c.newestWritten(); w != 4 {
			t.Errorf("process %d: newest written %d; want 4", self, w)
		}
		return c
	}
	c0 := run(0, 4)
	c1 := run(1, 5)
	if _, complete := c1.progress(); complete != 4 {
		t.Errorf("process 1 knows checkpoint %d complete; want 4", complete)
	}
	if ok, err := c0.store.Complete(4, 2); !ok || err != nil {
		t.Errorf("Complete(4) = %v, %v; want the checkpoint complete", ok, err)
	}
	parts, err := c0.store.ReadAll(4)
	if err != nil || len(parts) != 2 {
		t.Fatalf("ReadAll(4) = %d parts, %v; want 2", len(parts), err)
	}
	for _, p := range parts {
		if p.Epoch != 4 {
			t.Errorf("process %d's part names epoch %d; want 4", p.Process, p.Epoch)
		}
	}
}

type partRec struct{ ID int }

// A short source that ends early holds no part in memory: the process's
// parts are all written.
func TestNoStuckParts(t *testing.T) {
	j := NewJob("stuck", dataflow.Workers(1), dataflow.EpochRecords(100), dataflow.Checkpoints(t.TempDir(), 2, 3))
	a := op.SourceOf(j.Graph, "short", dataflow.SliceSource[partRec]{Records: make([]partRec, 1000), BatchSize: 50})
	b := op.SourceOf(j.Graph, "long", dataflow.SliceSource[partRec]{Records: make([]partRec, 30000), BatchSize: 50})
	op.Sink(op.Union(a, b), &dataflow.Collect[partRec]{}, dataflow.Name("out"))
	if err := j.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := j.coord.pending.Load(); n > 0 {
		t.Errorf("%d checkpoints' parts are stuck in memory", n)
	}
}
