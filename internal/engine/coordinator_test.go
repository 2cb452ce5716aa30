package engine

import (
	"log/slog"
	"testing"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/op"
)

// Two processes take checkpoint 4 at their first markers at or after it:
// one at epoch 4, one whose marker jumped to 5. Their parts still agree,
// and the checkpoint completes.
func TestPartsAgreeAcrossMarkerEpochs(t *testing.T) {
	dir := t.TempDir()
	mk := func(self int) (*coordinator, *reporter) {
		st, err := checkpoint.Open(checkpoint.OSFS(), dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := &reporter{}
		c := &coordinator{store: st, every: 2, keep: 3, self: self, procs: 2, groups: 128,
			log: slog.Default(), parts: map[uint64]*pendingPart{}, live: map[*reporter]bool{r: true}}
		r.c = c
		return c, r
	}
	c0, r0 := mk(0)
	c1, r1 := mk(1)
	if err := c0.Report(r0, 4, 4, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := c1.Report(r1, 4, 5, nil, nil); err != nil {
		t.Fatal(err)
	}
	if ok, err := c0.store.Complete(4, 2); !ok || err != nil {
		t.Errorf("Complete(4) = %v, %v; want the checkpoint complete", ok, err)
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
	if n := len(j.coord.parts); n > 0 {
		t.Errorf("%d checkpoints' parts are stuck in memory", n)
	}
}
