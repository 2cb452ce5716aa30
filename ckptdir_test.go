package weir_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

func ckptInput(n int) []rec {
	in := make([]rec, n)
	for i := range in {
		in[i] = rec{ID: i, Key: []string{"a", "b", "c"}[i%3], TS: int64(i) / 20}
	}
	return in
}

// stopPartway runs a job that is cut off after d, as a crash would.
func stopPartway(t *testing.T, j *weir.Job, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := j.Run(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("first run: %v; want it stopped partway", err)
	}
}

func latestCkpt(t *testing.T, dir string) string {
	t.Helper()
	c := completeCkpts(t, dir)
	if len(c) == 0 {
		t.Fatal("no complete checkpoint")
	}
	ents, _ := filepath.Glob(filepath.Join(dir, "chk-*"))
	for i := len(ents) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(ents[i], "MANIFEST")); err == nil {
			return ents[i]
		}
	}
	t.Fatal("no complete checkpoint")
	return ""
}

// A job does not resume from the checkpoints of another: another window,
// another input. It says what differs and what to do; a deliberate start
// from a chosen checkpoint is allowed. Other workers are the same job.
func TestCheckpointDirOfAnotherJob(t *testing.T) {
	dir := t.TempDir()
	opts := []weir.JobOption{weir.Workers(1), weir.EpochRecords(300), weir.Checkpoints(dir, 2, 3)}
	first := weir.NewJob("first", opts...)
	checkpointedCount(first, ckptInput(30000), 60000)
	stopPartway(t, first, 300*time.Millisecond)

	other := weir.NewJob("other", opts...)
	s := weir.Source(other, "src", weir.SliceSource[rec]{Records: ckptInput(30000), BatchSize: 100})
	timed := weir.EventTime(s, func(r rec) int64 { return r.TS }, 20*time.Millisecond, weir.Name("time"))
	weir.Sink(weir.Count(weir.Window(weir.KeyBy(timed, func(r rec) string { return r.Key }), weir.Tumbling(200*time.Millisecond),
		weir.WindowOptions(weir.Name("count")))), &weir.Collect[weir.WindowResult[string, int64]]{}, weir.Name("out"))
	err := other.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "belongs to another job") || !strings.Contains(err.Error(), "operator count") ||
		!strings.Contains(err.Error(), "tumbling 200ms") || !strings.Contains(err.Error(), "--from-checkpoint") {
		t.Fatalf("another window: %v; want a refusal naming operator count's window and what to do", err)
	}

	shorter := weir.NewJob("shorter", opts...)
	checkpointedCount(shorter, ckptInput(29999), 1e9)
	if err := shorter.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "source src") || !strings.Contains(err.Error(), "29999 records") {
		t.Fatalf("another input: %v; want a refusal naming source src", err)
	}

	// The same job with other workers resumes.
	same := weir.NewJob("same", weir.Workers(3), weir.EpochRecords(300), weir.Checkpoints(dir, 2, 3))
	checkpointedCount(same, ckptInput(30000), 60000)
	stopPartway(t, same, 300*time.Millisecond)
	if same.Metrics().RestoredFrom == 0 {
		t.Fatal("the same job with other workers did not resume")
	}

	// Deliberately, from a chosen checkpoint: allowed, and the directory
	// is the new job's from then on.
	chk := latestCkpt(t, dir)
	deliberate := weir.NewJob("deliberate", weir.Workers(1), weir.EpochRecords(300), weir.Checkpoints(dir, 2, 3), weir.FromCheckpoint(chk))
	s = weir.Source(deliberate, "src", weir.SliceSource[rec]{Records: ckptInput(30000), BatchSize: 100})
	timed = weir.EventTime(s, func(r rec) int64 { return r.TS }, 20*time.Millisecond, weir.Name("time"))
	weir.Sink(weir.Count(weir.Window(weir.KeyBy(timed, func(r rec) string { return r.Key }), weir.Tumbling(200*time.Millisecond),
		weir.WindowOptions(weir.Name("count")))), &weir.Collect[weir.WindowResult[string, int64]]{}, weir.Name("out"))
	if err := deliberate.Run(context.Background()); err != nil {
		t.Fatalf("deliberate start from %s: %v", chk, err)
	}
	if deliberate.Metrics().RestoredFrom == 0 {
		t.Error("the deliberate start restored nothing")
	}
}

// A job that ran to its end marks its directory; starting it again there
// is refused instead of resuming the old run.
func TestCheckpointDirFinished(t *testing.T) {
	dir := t.TempDir()
	opts := []weir.JobOption{weir.Workers(2), weir.EpochRecords(300), weir.Checkpoints(dir, 2, 3)}
	first := weir.NewJob("first", opts...)
	checkpointedCount(first, ckptInput(3000), 1e9)
	if err := first.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	again := weir.NewJob("again", opts...)
	checkpointedCount(again, ckptInput(3000), 1e9)
	err := again.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "ran to its end") {
		t.Fatalf("second run: %v; want it refused: the job ran to its end", err)
	}
	chk := latestCkpt(t, dir)
	from := weir.NewJob("from", append(opts, weir.FromCheckpoint(chk))...)
	out := checkpointedCount(from, ckptInput(3000), 1e9)
	if err := from.Run(context.Background()); err != nil {
		t.Fatalf("from %s: %v", chk, err)
	}
	var n int64
	for _, w := range out.Records() {
		n += w.Value
	}
	if n != 3000 {
		t.Errorf("from a checkpoint of the finished run: %d records counted, want 3000", n)
	}
}

// A directory in use by a running job is refused at once, naming the job
// that holds it.
func TestCheckpointDirBusy(t *testing.T) {
	dir := t.TempDir()
	opts := []weir.JobOption{weir.Workers(1), weir.EpochRecords(300), weir.Checkpoints(dir, 2, 3)}
	running := weir.NewJob("running", opts...)
	checkpointedCount(running, ckptInput(30000), 3000)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- running.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(5 * time.Second)
	for len(completeCkpts(t, dir)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	second := weir.NewJob("second", opts...)
	checkpointedCount(second, ckptInput(30000), 1e9)
	start := time.Now()
	err := second.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "in use") || !strings.Contains(err.Error(), `job "running"`) {
		t.Fatalf("second job on a busy directory: %v; want a refusal naming job \"running\"", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refused after %v; want at once", d)
	}
}
