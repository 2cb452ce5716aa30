package file_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
)

// Recover(n) discards what came after n, committed parts included.
func TestPartsRecoverKeepsLaterCommittedParts(t *testing.T) {
	dir := t.TempDir()
	p := file.Parts(dir, func(b []byte, v int) []byte { return fmt.Append(b, v) })
	p.Write([]int{1})
	p.Prepare(2)
	p.Commit(2, nil)
	p.Write([]int{2})
	p.Prepare(4)
	p.Commit(4, nil)
	if err := p.Recover(2); err != nil {
		t.Fatal(err)
	}
	b, _ := file.ReadParts(dir)
	if string(b) != "1\n" {
		t.Errorf("after Recover(2): visible %q; want only checkpoint 2's lines", b)
	}
}

// Starting from a checkpoint older than the latest takes back the parts
// committed after it, which the job writes again: no duplicates.
func TestPartsFromOlderCheckpointDuplicates(t *testing.T) {
	in := make([]click, 6000)
	for i := range in {
		in[i] = click{User: fmt.Sprintf("u%d", i%7), TS: int64(i)}
	}
	build := func(j *weir.Job, dir string, crashAt int64) {
		src := weir.Source(j, "clicks", weir.SliceSource[click]{Records: in, BatchSize: 50})
		src = weir.Map(src, func(c click) click {
			if c.TS == crashAt {
				panic("crash")
			}
			return c
		}, weir.Stateless(), weir.Name("crash"))
		weir.Sink(src, file.Parts(dir, func(b []byte, c click) []byte { return fmt.Appendf(b, "%s,%d", c.User, c.TS) }), weir.Name("parts"))
	}
	dir, ckpt := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first := weir.NewJob("first", weir.Workers(1), weir.EpochRecords(200), weir.Checkpoints(ckpt, 3, 100))
	build(first, dir, 5000)
	t.Log("first:", firstErrLine(first.Run(ctx)))
	second := weir.NewJob("second", weir.Workers(2), weir.EpochRecords(200), weir.Checkpoints(ckpt, 3, 100),
		weir.FromCheckpoint(filepath.Join(ckpt, "chk-000000000012")))
	build(second, dir, -1)
	if err := second.Run(ctx); err != nil {
		t.Fatal(err)
	}
	out, _ := file.ReadParts(dir)
	got := sortedLines(out)
	if n := len(slices.Compact(slices.Clone(got))); len(got) != len(in) || n != len(in) {
		t.Errorf("restored from %d: %d lines (%d distinct); want %d once each", second.Metrics().RestoredFrom, len(got), n, len(in))
	}
}

func firstErrLine(err error) string {
	if err == nil {
		return "<nil>"
	}
	s := err.Error()
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}
