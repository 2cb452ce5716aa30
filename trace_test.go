package weir_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/trace"
)

// A run with TraceFile writes a whole, readable trace file (however few
// events the workers record) and keeps tracing on throughout.
func TestTraceFileRun(t *testing.T) {
	in, _ := stopInput()
	path := filepath.Join(t.TempDir(), "run.trace")
	j := weir.NewJob("traced", weir.Workers(2), weir.EpochRecords(300), weir.TraceFile(path))
	checkpointedCount(j, in[:3000], 1e9)
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	tr, err := trace.ReadFile(path)
	if err != nil {
		t.Fatalf("the trace file: %v", err)
	}
	if tr.Process != 0 || tr.Processes != 1 {
		t.Errorf("trace of process %d of %d", tr.Process, tr.Processes)
	}
	if err := j.TraceFor(time.Second); err == nil {
		t.Error("TraceFor after Run accepted")
	}
}

// A trace file that cannot be made fails the run at its start.
func TestTraceFileRefused(t *testing.T) {
	in, _ := stopInput()
	j := weir.NewJob("traced", weir.TraceFile(""))
	checkpointedCount(j, in[:10], 1e9)
	if err := j.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "TraceFile") {
		t.Errorf("TraceFile(\"\"): %v", err)
	}
	j = weir.NewJob("traced", weir.TraceFile(filepath.Join(t.TempDir(), "no", "such", "dir")))
	checkpointedCount(j, in[:10], 1e9)
	if err := j.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "TraceFile") {
		t.Errorf("TraceFile in a missing directory: %v", err)
	}
}

// TraceFor switches tracing on in a running job, and its service off
// again once the time is up.
func TestTraceFor(t *testing.T) {
	in, _ := stopInput()
	j := weir.NewJob("for", weir.Workers(2), weir.EpochRecords(300))
	checkpointedCount(j, in, 1000) // 30 s of input: stopped below
	if err := j.TraceFor(time.Second); err == nil {
		t.Error("TraceFor before Run accepted")
	}
	done := make(chan error, 1)
	go func() { done <- j.Run(context.Background()) }()
	deadline := time.Now().Add(30 * time.Second)
	for j.TraceFor(300*time.Millisecond) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the job never accepted TraceFor")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !j.Tracing() {
		t.Error("not tracing after TraceFor")
	}
	for j.Tracing() {
		if time.Now().After(deadline) {
			t.Fatal("still tracing 30 s after TraceFor(300ms)")
		}
		time.Sleep(10 * time.Millisecond)
	}
	j.Stop()
	if err := <-done; err != nil && !errors.Is(err, weir.ErrStopped) {
		t.Fatal(err)
	}
}
