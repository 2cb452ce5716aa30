package checkpoint

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// warned reports whether the log has a warning naming file and problem.
func warned(log, file, problem string) bool {
	for line := range strings.SplitSeq(log, "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "file="+file) && strings.Contains(line, problem) {
			return true
		}
	}
	return false
}

func TestLatestSkipsUnusable(t *testing.T) {
	forEachFS(t, func(t *testing.T, e *env) {
		seed := rand.Uint64()
		r := rand.New(rand.NewPCG(seed, 0))
		t.Logf("seed %d", seed)
		for n := uint64(1); n <= 8; n++ {
			e.write(t, n, 2)
		}
		e.s.WritePart(samplePart(9, 0, 2, 1, 1)) // 9: partial, no manifest
		part1 := e.path(8, partName(1))
		if err := e.fs.Remove(part1); err != nil { // 8: part missing
			t.Fatal(err)
		}
		man7 := e.path(7, manifestName) // 7: manifest bit-flipped
		if err := e.dmg.FlipBit(man7, r.IntN(8*e.size(t, man7))); err != nil {
			t.Fatal(err)
		}
		man6 := e.path(6, manifestName) // 6: manifest truncated
		if err := e.dmg.Truncate(man6, r.IntN(e.size(t, man6))); err != nil {
			t.Fatal(err)
		}
		part5 := e.path(5, partName(0)) // 5: part bit-flipped
		if err := e.dmg.FlipBit(part5, r.IntN(8*e.size(t, part5))); err != nil {
			t.Fatal(err)
		}
		part4 := e.path(4, partName(1)) // 4: part truncated
		if err := e.dmg.Truncate(part4, r.IntN(e.size(t, part4))); err != nil {
			t.Fatal(err)
		}
		man3 := e.path(3, manifestName) // 3: manifest missing
		if err := e.fs.Remove(man3); err != nil {
			t.Fatal(err)
		}
		if n, ok := e.latest(t); !ok || n != 2 {
			t.Fatalf("Latest = %d, %v, want 2", n, ok)
		}
		log := e.log.String()
		for _, w := range []struct{ file, problem string }{
			{e.path(9, manifestName), "manifest missing"},
			{part1, "part 1 of checkpoint 8 missing"},
			{man7, "corrupt"},
			{man6, "corrupt"},
			{part5, "corrupt"},
			{part4, "manifest records"},
			{man3, "manifest missing"},
		} {
			if !warned(log, w.file, w.problem) {
				t.Errorf("no warning naming %s and %q in\n%s", w.file, w.problem, log)
			}
		}
		if warned(log, e.path(2, manifestName), "") {
			t.Errorf("warned about the good checkpoint 2")
		}
	})
}

// TestLatestDetectsEveryBitFlip flips each bit of a part and of a manifest
// in turn: Latest must fall back to the previous checkpoint every time.
func TestLatestDetectsEveryBitFlip(t *testing.T) {
	m := MemFS()
	e := newEnv(t, m, "/ckp", m)
	e.write(t, 1, 2)
	for i := range 2 {
		if err := e.s.WritePart(Part{Checkpoint: 2, Epoch: 2, Process: i, Processes: 2,
			State: []StateBlob{{Operator: "op", KeyGroup: 3, Data: []byte("state")}}}); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := e.s.Complete(2, 2); !ok || err != nil {
		t.Fatal(ok, err)
	}
	for _, f := range []string{e.path(2, partName(1)), e.path(2, manifestName)} {
		for bit := range 8 * e.size(t, f) {
			m.FlipBit(f, bit)
			if n, ok := e.latest(t); !ok || n != 1 {
				t.Fatalf("%s with bit %d flipped: Latest = %d, %v", f, bit, n, ok)
			}
			m.FlipBit(f, bit)
		}
	}
	if n, _ := e.latest(t); n != 2 {
		t.Fatalf("Latest = %d after restoring every bit", n)
	}
}

func TestLatestReturnsIOErrors(t *testing.T) {
	m := MemFS()
	e := newEnv(t, m, "/ckp", m)
	e.write(t, 1, 2)
	e.write(t, 2, 2)
	// The manifest of checkpoint 2, then a piece of its first part.
	for _, op := range []Op{OpReadFile, OpReadRange} {
		m.Fail(op, 1, nil)
		if n, ok, err := e.s.Latest(); ok || !errors.Is(err, ErrInjected) {
			t.Fatalf("Latest with a failing %v = %d, %v, %v; want the error", op, n, ok, err)
		}
	}
	m.Fail(OpReadDir, 1, nil)
	if _, _, err := e.s.Latest(); !errors.Is(err, ErrInjected) {
		t.Fatalf("Latest with a failing listing: %v", err)
	}
}

func TestFailedWriteLeavesNoPart(t *testing.T) {
	for _, op := range []Op{OpCreate, OpWrite, OpSync, OpClose, OpRename} {
		m := MemFS()
		e := newEnv(t, m, "/ckp", m)
		m.Fail(op, 1, nil)
		err := e.s.WritePart(samplePart(1, 0, 1, 3, 3))
		if !errors.Is(err, ErrInjected) || !strings.HasPrefix(err.Error(), "checkpoint: write part 0 of checkpoint 1: ") {
			t.Fatalf("%v fault: WritePart: %v", op, err)
		}
		if files := m.Files(); len(files) != 0 {
			t.Fatalf("%v fault left %v", op, files)
		}
		if ok, err := e.s.Complete(1, 1); ok || err != nil {
			t.Fatalf("%v fault: Complete = %v, %v", op, ok, err)
		}
	}
}

var tempFile = regexp.MustCompile(`/\.tmp-part-0000\.bin-[0-9]+$`)

func TestCrashBeforeRename(t *testing.T) {
	m := MemFS()
	e := newEnv(t, m, "/ckp", m)
	m.CrashAt(OpRename, 2) // the part's, after its index's
	if err := e.s.WritePart(samplePart(1, 0, 2, 3, 3)); !errors.Is(err, ErrCrashed) {
		t.Fatalf("WritePart: %v", err)
	}
	m.Crash(KeepNames) // the temporary file's name survives
	files := m.Files()
	if len(files) != 2 || !tempFile.MatchString(files[0]) || !strings.HasSuffix(files[1], "/"+indexName(0)) {
		t.Fatalf("files after the crash: %v", files)
	}
	e = newEnv(t, m, "/ckp", m) // restart
	if _, err := e.s.ReadPart(1, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadPart: %v", err)
	}
	if _, ok := e.latest(t); ok {
		t.Fatal("Latest found a checkpoint")
	}
	e.write(t, 1, 2)
	if n, ok := e.latest(t); !ok || n != 1 {
		t.Fatalf("Latest = %d, %v", n, ok)
	}
	if !slices.ContainsFunc(m.Files(), tempFile.MatchString) {
		t.Fatal("stale temporary file gone before Prune")
	}
	if err := e.s.Prune(1); err != nil {
		t.Fatal(err)
	}
	if files := m.Files(); len(files) != 5 || slices.ContainsFunc(files, tempFile.MatchString) {
		t.Fatalf("files after Prune: %v", files)
	}
}

func TestCrashDurability(t *testing.T) {
	m := MemFS()
	e := newEnv(t, m, "/ckp", m)
	e.write(t, 1, 1)
	m.Crash(LoseUnsynced) // everything written is synced
	if n, ok := e.latest(t); !ok || n != 1 {
		t.Fatalf("Latest after a crash = %d, %v", n, ok)
	}
	// A crash before the directory is synced: the part is not durable, but
	// never visible half-written either.
	m.CrashAt(OpSyncDir, 3) // the part's, after the checkpoint's and its index's
	if err := e.s.WritePart(samplePart(2, 0, 1, 3, 3)); !errors.Is(err, ErrCrashed) {
		t.Fatalf("WritePart: %v", err)
	}
	m.Crash(LoseUnsynced)
	if _, err := m.ReadFile(e.path(2, partName(0))); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("unsynced part survived: %v", err)
	}
	m.CrashAt(OpSyncDir, 3)
	e.s.WritePart(samplePart(2, 0, 1, 3, 3))
	m.Crash(KeepNames) // the name survives: so must the contents
	if _, err := e.s.ReadPart(2, 0); err != nil {
		t.Fatalf("part renamed before its data was synced: %v", err)
	}
	// A crash in the middle of removing a checkpoint leaves it incomplete.
	e.write(t, 3, 1)
	if ok, err := e.s.Complete(2, 1); !ok || err != nil {
		t.Fatal(ok, err)
	}
	// The part's temporary file of the first crash survives it (the
	// index's directory sync made its name durable): Prune removes it
	// first, then the manifest of 1, and crashes at the next removal.
	if !slices.ContainsFunc(m.Files(), tempFile.MatchString) {
		t.Fatal("no stale temporary file of the crashed write")
	}
	m.CrashAt(OpRemove, 3)
	if err := e.s.Prune(2); !errors.Is(err, ErrCrashed) {
		t.Fatalf("Prune: %v", err)
	}
	m.Crash(LoseUnsynced)
	if _, err := m.ReadFile(e.path(1, manifestName)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("manifest of a half-removed checkpoint: %v", err)
	}
	if n, ok := e.latest(t); !ok || n != 3 {
		t.Fatalf("Latest = %d, %v", n, ok)
	}
}

func TestPrune(t *testing.T) {
	forEachFS(t, func(t *testing.T, e *env) {
		e.s.WritePart(samplePart(0, 0, 2, 1, 1)) // incomplete, old
		for n := uint64(1); n <= 6; n++ {
			e.write(t, n, 2)
		}
		e.s.WritePart(samplePart(7, 0, 2, 1, 1)) // in progress
		p5 := e.path(5, partName(1))
		if err := e.dmg.FlipBit(p5, 100); err != nil {
			t.Fatal(err)
		}
		e.forgetWritten() // damage inside a part is found by a store that did not write it
		if err := e.s.Prune(0); err == nil {
			t.Fatal("Prune(0) succeeded")
		}
		if err := e.s.Prune(2); err != nil {
			t.Fatal(err)
		}
		if ns, _ := e.s.list(); !slices.Equal(ns, []uint64{4, 6, 7}) {
			t.Fatalf("after Prune(2): %v, want [4 6 7]", ns)
		}
		if err := e.s.Prune(1); err != nil {
			t.Fatal(err)
		}
		if ns, _ := e.s.list(); !slices.Equal(ns, []uint64{6, 7}) {
			t.Fatalf("after Prune(1): %v, want [6 7]", ns)
		}
		if n, ok := e.latest(t); !ok || n != 6 {
			t.Fatalf("Latest = %d, %v", n, ok)
		}
	})
}

func TestPruneWithoutCompleteKeepsAll(t *testing.T) {
	m := MemFS()
	e := newEnv(t, m, "/ckp", m)
	e.s.WritePart(samplePart(1, 0, 2, 1, 1))
	e.s.WritePart(samplePart(2, 0, 2, 1, 1))
	if err := e.s.Prune(1); err != nil {
		t.Fatal(err)
	}
	if ns, _ := e.s.list(); !slices.Equal(ns, []uint64{1, 2}) {
		t.Fatalf("after Prune: %v", ns)
	}
}

func TestPruneRace(t *testing.T) {
	forEachFS(t, func(t *testing.T, e *env) {
		for n := uint64(1); n <= 6; n++ {
			e.write(t, n, 2)
		}
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { errs[i] = e.s.Prune(2) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if ns, _ := e.s.list(); !slices.Equal(ns, []uint64{5, 6}) {
			t.Fatalf("after racing Prunes: %v", ns)
		}
	})
}

// A prune whose removal of a checkpoint's directory finds it not empty
// (another process wrote into it meanwhile) tries again rather than fail.
func TestPruneRetriesNotEmpty(t *testing.T) {
	m := MemFS()
	e := newEnv(t, m, "/ckp", m)
	for n := uint64(1); n <= 3; n++ {
		e.write(t, n, 2)
	}
	// The second removal is the first checkpoint's RemoveAll (its
	// manifest goes first).
	m.Fail(OpRemove, 2, &fs.PathError{Op: "remove", Path: "/ckp", Err: errors.New("directory not empty")})
	if err := e.s.Prune(1); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	if ns, _ := e.s.list(); !slices.Equal(ns, []uint64{3}) {
		t.Fatalf("after Prune(1): %v, want [3]", ns)
	}
}
