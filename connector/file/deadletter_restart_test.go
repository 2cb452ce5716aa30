package file

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

func recoverAt(t *testing.T, d *DeadLetter, n uint64, proc, procs int) {
	t.Helper()
	if err := d.Recover(weir.RecoverContext{Checkpoint: n, Source: "src", Process: proc, Processes: procs}); err != nil {
		t.Fatal(err)
	}
}

func letterAt(off int64) Letter {
	return Letter{Source: "src", File: "in", Line: off/10 + 1, Offset: off, Reason: "bad", Record: fmt.Sprint("record ", off)}
}

func addAll(t *testing.T, d *DeadLetter, offs ...int64) {
	t.Helper()
	for _, off := range offs {
		if err := d.Add(letterAt(off)); err != nil {
			t.Fatal(err)
		}
	}
}

// offsetsIn returns the offsets of the letters of path and its siblings.
func offsetsIn(t *testing.T, path string) []int64 {
	t.Helper()
	ls, err := ReadDeadLetters(path)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for _, l := range ls {
		offs = append(offs, l.Offset)
	}
	slices.Sort(offs)
	return offs
}

// A restart from a checkpoint keeps the file, counts its letters, cuts off
// an incomplete last line and does not write a position twice; a fresh
// start empties the file.
func TestDeadLetterRecover(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	d, err := OpenDeadLetter(path)
	if err != nil {
		t.Fatal(err)
	}
	recoverAt(t, d, 0, 0, 1)
	addAll(t, d, 0, 10, 20)
	// Not closed: as after a crash.

	d2, _ := OpenDeadLetter(path)
	recoverAt(t, d2, 4, 0, 1)
	if d2.Count() != 3 {
		t.Errorf("Count after a restart = %d, want the 3 letters in the file", d2.Count())
	}
	addAll(t, d2, 10, 20, 30, 0, 40)
	if d2.Count() != 5 {
		t.Errorf("Count = %d, want 5", d2.Count())
	}
	if got, want := offsetsIn(t, path), []int64{0, 10, 20, 30, 40}; !slices.Equal(got, want) {
		t.Errorf("letters at %v, want %v", got, want)
	}
	if err := d2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d2.Add(letterAt(50)); !errors.Is(err, errClosed) {
		t.Errorf("Add after Close = %v", err)
	}

	// A crash in the middle of a line leaves it incomplete.
	whole, _ := os.ReadFile(path)
	line, _ := letterAt(50).appendJSON(nil)
	if err := os.WriteFile(path, append(slices.Clone(whole), line[:len(line)/2]...), 0o644); err != nil {
		t.Fatal(err)
	}
	d3, _ := OpenDeadLetter(path)
	recoverAt(t, d3, 8, 0, 1)
	if after, _ := os.ReadFile(path); string(after) != string(whole) {
		t.Errorf("after the restart the file holds\n%s\nwant\n%s", after, whole)
	}
	if d3.Count() != 5 {
		t.Errorf("Count = %d with an incomplete line, want 5", d3.Count())
	}
	addAll(t, d3, 50, 40)
	if got, want := offsetsIn(t, path), []int64{0, 10, 20, 30, 40, 50}; !slices.Equal(got, want) {
		t.Errorf("letters at %v, want %v", got, want)
	}
	// A corrupt complete line is an error, not skipped.
	if err := os.WriteFile(path, append(slices.Clone(whole), "{not json\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	d4, _ := OpenDeadLetter(path)
	if err := d4.Recover(weir.RecoverContext{Checkpoint: 9, Processes: 1}); err == nil || !strings.Contains(err.Error(), path+":6:") {
		t.Errorf("Recover over a corrupt line = %v, want an error naming %s:6", err, path)
	}

	// A fresh start empties it.
	d5, _ := OpenDeadLetter(path)
	recoverAt(t, d5, 0, 0, 1)
	if st, err := os.Stat(path); err != nil || st.Size() != 0 || d5.Count() != 0 {
		t.Errorf("after a fresh start: %v, Count %d; want an empty file", err, d5.Count())
	}
	addAll(t, d5, 0)
	if got := offsetsIn(t, path); !slices.Equal(got, []int64{0}) {
		t.Errorf("letters at %v after a fresh start, want [0]", got)
	}
}

// Each process writes its own file; a restart with another number of
// processes skips the positions in any of them, and process 0 counts the
// files no process writes any more. A fresh start removes those.
func TestDeadLetterProcesses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dead")
	open := func(n uint64, proc, procs int) *DeadLetter {
		d, err := OpenDeadLetter(path)
		if err != nil {
			t.Fatal(err)
		}
		recoverAt(t, d, n, proc, procs)
		return d
	}
	// A run of 3 processes, restarted once from a checkpoint.
	old := []*DeadLetter{open(0, 0, 3), open(0, 1, 3), open(0, 2, 3)}
	addAll(t, old[0], 0, 10)
	addAll(t, old[1], 20)
	addAll(t, old[2], 30, 40)
	// Unrelated files stay.
	for _, name := range []string{"dead.process-x", "dead.process-07", "deadx", "other"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("keep\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// It goes on with 2: what process 2 wrote is process 0's to count.
	p0, p1 := open(5, 0, 2), open(5, 1, 2)
	if p0.Path() != path+".process-0" || p1.Path() != path+".process-1" {
		t.Errorf("paths %s and %s", p0.Path(), p1.Path())
	}
	if p0.Count() != 4 || p1.Count() != 1 {
		t.Errorf("Counts %d and %d, want 4 (its 2 and process 2's) and 1", p0.Count(), p1.Count())
	}
	addAll(t, p1, 30, 0, 50) // read again, by other processes
	addAll(t, p0, 20, 40, 60)
	if p0.Count()+p1.Count() != 7 {
		t.Errorf("Counts %d + %d, want 7 in all", p0.Count(), p1.Count())
	}
	if got, want := offsetsIn(t, path), []int64{0, 10, 20, 30, 40, 50, 60}; !slices.Equal(got, want) {
		t.Errorf("letters at %v, want %v", got, want)
	}
	// Then in one process, which writes path and counts all.
	one := open(6, 0, 1)
	if one.Path() != path || one.Count() != 7 {
		t.Errorf("one process: %s, Count %d; want %s, 7", one.Path(), one.Count(), path)
	}
	addAll(t, one, 50, 70)
	if got, want := offsetsIn(t, path), []int64{0, 10, 20, 30, 40, 50, 60, 70}; !slices.Equal(got, want) {
		t.Errorf("letters at %v, want %v", got, want)
	}
	// A fresh start of 2 processes: process 1 empties its own file only,
	// process 0 its own and those no process writes.
	open(0, 1, 2)
	if got, want := offsetsIn(t, path), []int64{0, 10, 30, 40, 60, 70}; !slices.Equal(got, want) {
		t.Errorf("after process 1's fresh start, letters at %v, want %v", got, want)
	}
	open(0, 0, 2)
	if got := offsetsIn(t, path); len(got) != 0 {
		t.Errorf("after a fresh start, letters at %v", got)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"dead.process-0", "dead.process-07", "dead.process-1", "dead.process-x", "deadx", "other"}; !slices.Equal(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
}

// deadInput writes n JSON lines, every 37th bad, and returns the path.
func deadInput(t *testing.T, n int) string {
	var b strings.Builder
	for i := range n {
		switch {
		case i%37 == 5:
			fmt.Fprintf(&b, "{\"user\":\"u%d\",\"n\":%d\n", i, i)
		case i%37 == 20:
			fmt.Fprintf(&b, "{\"n\":%d}\n", i)
		default:
			fmt.Fprintf(&b, "{\"user\":\"u%d\",\"n\":%d}\n", i, i)
		}
	}
	p := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runDead runs a job over in with checkpoints in ckpt that fails at the
// record numbered crashAt (-1: none), and returns the records it
// collected, how it started and its error.
func runDead(in, ckpt string, dl *DeadLetter, workers, crashAt int) ([]int, uint64, error) {
	j := weir.NewJob("dead", weir.Workers(workers), weir.EpochRecords(100), weir.Checkpoints(ckpt, 2, 3))
	src := weir.Source(j, "events", JSONLines([]string{in}, decodeEvent, Options{DeadLetter: dl, BatchSize: 50}))
	s := weir.Map(src, func(e event) int {
		if e.N == crashAt {
			panic("crash")
		}
		return e.N
	}, weir.Stateless())
	col := &weir.Collect[int]{}
	weir.Sink(s, col, weir.Name("out"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := j.Run(ctx)
	return col.Records(), j.Metrics().RestoredFrom, err
}

// A job that fails and is restored from a checkpoint leaves each bad line
// in the dead-letter file once, and counts them all; a plain writer
// (NewDeadLetter) has some twice.
func TestDeadLetterJobRestart(t *testing.T) {
	const n = 10_000
	in := deadInput(t, n)
	want := scanLetters(t, "events", []string{in}, false, func(l string) error { _, err := decodeEvent(l); return err })
	var wantGood []int
	for i := range n {
		if i%37 != 5 && i%37 != 20 {
			wantGood = append(wantGood, i)
		}
	}
	// The second run has one reader: with several, a reader that ends
	// early can have a checkpoint part pruned as it writes it (a race of
	// the coordinator's, not of the dead letters).
	for _, w := range [][2]int{{1, 1}, {3, 1}} {
		t.Run(fmt.Sprintf("workers=%d,%d", w[0], w[1]), func(t *testing.T) {
			dir := t.TempDir()
			path, ckpt := filepath.Join(dir, "dead.jsonl"), filepath.Join(dir, "ckpt")
			dl, err := OpenDeadLetter(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := runDead(in, ckpt, dl, w[0], 6_003); err == nil {
				t.Fatal("first run: no crash")
			}
			dl2, _ := OpenDeadLetter(path)
			got, from, err := runDead(in, ckpt, dl2, w[1], -1)
			if err != nil || from == 0 {
				t.Fatalf("second run: %v, restored from %d", err, from)
			}
			slices.Sort(got)
			if !slices.Equal(got, wantGood) {
				t.Errorf("collected %d records, want %d", len(got), len(wantGood))
			}
			letters, err := ReadDeadLetters(path)
			if err != nil {
				t.Fatal(err)
			}
			diffLetters(t, "after the restart", letters, want)
			if dl2.Count() != int64(len(want)) {
				t.Errorf("Count = %d, want %d", dl2.Count(), len(want))
			}
		})
	}
	t.Run("plain writer", func(t *testing.T) {
		dir := t.TempDir()
		path, ckpt := filepath.Join(dir, "dead.jsonl"), filepath.Join(dir, "ckpt")
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		runDead(in, ckpt, NewDeadLetter(f), 1, 6_001)
		if _, from, err := runDead(in, ckpt, NewDeadLetter(f), 1, -1); err != nil || from == 0 {
			t.Fatalf("second run: %v, restored from %d", err, from)
		}
		letters, err := ReadDeadLetters(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(letters) <= len(want) {
			t.Errorf("%d letters for %d bad lines: the restart read none again", len(letters), len(want))
		}
		seen := map[int64]bool{}
		for _, l := range letters {
			seen[l.Offset] = true
		}
		if len(seen) != len(want) {
			t.Errorf("%d positions, want %d", len(seen), len(want))
		}
	})
}
