package engine

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/weirstream/weir/internal/checkpoint"
)

// A failed part or manifest write of checkpoint n is no failure of the
// job when another process has completed a later checkpoint (and may have
// pruned n's directory meanwhile); it is one otherwise.
func TestSupersededWrites(t *testing.T) {
	st, err := checkpoint.Open(checkpoint.OSFS(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &ckptService{c: &coordinator{store: st, log: slog.Default()}}
	gone := errors.New("rename MANIFEST: no such file or directory")
	if s.superseded(3, gone, "it was completed") {
		t.Fatal("superseded(3) with no later checkpoint complete = true; want false")
	}
	if err := st.WritePart(checkpoint.Part{Checkpoint: 5, Epoch: 5, Process: 0, Processes: 1}); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.Complete(5, 1); !ok || err != nil {
		t.Fatalf("Complete(5) = %v, %v; want true", ok, err)
	}
	if !s.superseded(3, gone, "it was completed") {
		t.Error("superseded(3) with checkpoint 5 complete = false; want true")
	}
	if s.superseded(3, nil, "it was completed") {
		t.Error("superseded(3) without an error = true; want false")
	}
	if s.superseded(5, gone, "it was completed") {
		t.Error("superseded(5) with nothing complete after 5 = true; want false")
	}
}
