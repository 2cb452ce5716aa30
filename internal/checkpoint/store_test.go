package checkpoint

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// damager damages files on disk.
type damager interface {
	Truncate(name string, size int) error
	FlipBit(name string, bit int) error
}

type osDamage struct{}

func (osDamage) Truncate(name string, size int) error { return os.Truncate(name, int64(size)) }

func (osDamage) FlipBit(name string, bit int) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	b[bit/8] ^= 1 << (bit % 8)
	return os.WriteFile(name, b, 0o644)
}

// env is a store over one FS, with its log captured.
type env struct {
	s   *Store
	fs  FS
	dmg damager
	log *bytes.Buffer
}

func newEnv(t *testing.T, fsys FS, dir string, dmg damager) *env {
	t.Helper()
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := Open(fsys, dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	return &env{s: s, fs: fsys, dmg: dmg, log: &buf}
}

// forEachFS runs f over MemFS and over the OS file system.
func forEachFS(t *testing.T, f func(t *testing.T, e *env)) {
	t.Run("mem", func(t *testing.T) {
		m := MemFS()
		f(t, newEnv(t, m, "/data/ckp", m))
	})
	t.Run("os", func(t *testing.T) {
		f(t, newEnv(t, OSFS(), t.TempDir(), osDamage{}))
	})
}

// forgetWritten makes e's store forget the parts it wrote, as a store
// opened afterwards (a restart, another process) would not know them.
func (e *env) forgetWritten() {
	e.s.mu.Lock()
	e.s.written = nil
	e.s.mu.Unlock()
}

func (e *env) path(n uint64, name string) string { return filepath.Join(e.s.chkDir(n), name) }

func (e *env) size(t *testing.T, name string) int {
	b, err := e.fs.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// write writes every part of checkpoint n and completes it.
func (e *env) write(t *testing.T, n uint64, processes int) []Part {
	t.Helper()
	var parts []Part
	for i := range processes {
		p := samplePart(n, i, processes, 5, 16)
		if err := e.s.WritePart(p); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, normalize(p))
	}
	if ok, err := e.s.Complete(n, processes); !ok || err != nil {
		t.Fatalf("Complete(%d) = %v, %v", n, ok, err)
	}
	return parts
}

func (e *env) latest(t *testing.T) (uint64, bool) {
	t.Helper()
	n, ok, err := e.s.Latest()
	if err != nil {
		t.Fatal(err)
	}
	return n, ok
}

func TestStoreRoundTrip(t *testing.T) {
	forEachFS(t, func(t *testing.T, e *env) {
		parts := []Part{
			samplePart(7, 0, 3, 1000, 100),
			{Checkpoint: 7, Epoch: 7, Process: 1, Processes: 3},
			{Checkpoint: 7, Epoch: 7, Process: 2, Processes: 3, State: []StateBlob{{Operator: "big", Data: bytes.Repeat([]byte("x"), 4<<20)}}},
		}
		for _, p := range parts {
			if err := e.s.WritePart(p); err != nil {
				t.Fatal(err)
			}
		}
		got, err := e.s.ReadPart(7, 1) // before the manifest
		if err != nil || !reflect.DeepEqual(got, normalize(parts[1])) {
			t.Fatalf("ReadPart before Complete: %v", err)
		}
		if ok, err := e.s.Complete(7, 3); !ok || err != nil {
			t.Fatalf("Complete = %v, %v", ok, err)
		}
		for i, p := range parts {
			got, err := e.s.ReadPart(7, i)
			if err != nil || !reflect.DeepEqual(got, normalize(p)) {
				t.Fatalf("ReadPart(7, %d): %v", i, err)
			}
		}
		all, err := e.s.ReadAll(7)
		if err != nil || len(all) != 3 || !reflect.DeepEqual(all[2], normalize(parts[2])) {
			t.Fatalf("ReadAll: %d parts, %v", len(all), err)
		}
		if n, ok := e.latest(t); !ok || n != 7 {
			t.Fatalf("Latest = %d, %v", n, ok)
		}
	})
}

func TestCompleteNeedsAllParts(t *testing.T) {
	forEachFS(t, func(t *testing.T, e *env) {
		for _, i := range []int{0, 2} {
			if err := e.s.WritePart(samplePart(3, i, 3, 2, 2)); err != nil {
				t.Fatal(err)
			}
		}
		if ok, err := e.s.Complete(3, 3); ok || err != nil {
			t.Fatalf("Complete with a part missing = %v, %v", ok, err)
		}
		if _, err := e.fs.ReadFile(e.path(3, manifestName)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("manifest written for an incomplete checkpoint: %v", err)
		}
		if _, ok := e.latest(t); ok {
			t.Fatal("Latest found an incomplete checkpoint")
		}
		if _, err := e.s.ReadAll(3); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "incomplete") {
			t.Fatalf("ReadAll of an incomplete checkpoint: %v", err)
		}
		// A part of a run with 4 processes does not stand in for process 1.
		if err := e.s.WritePart(samplePart(3, 1, 4, 2, 2)); err != nil {
			t.Fatal(err)
		}
		if ok, err := e.s.Complete(3, 3); ok || err != nil {
			t.Fatalf("Complete with a stale part = %v, %v", ok, err)
		}
		if !strings.Contains(e.log.String(), "stale part") {
			t.Fatalf("no warning about the stale part in %q", e.log)
		}
		if err := e.s.WritePart(samplePart(3, 1, 3, 2, 2)); err != nil {
			t.Fatal(err)
		}
		for range 2 { // idempotent
			if ok, err := e.s.Complete(3, 3); !ok || err != nil {
				t.Fatalf("Complete = %v, %v", ok, err)
			}
		}
		if _, err := e.s.Complete(3, 4); err == nil || !strings.Contains(err.Error(), "records 3 processes, want 4") {
			t.Fatalf("Complete with another process count: %v", err)
		}
	})
}

func TestWritePartRefusesCompleteAndDiscardAfter(t *testing.T) {
	forEachFS(t, func(t *testing.T, e *env) {
		e.write(t, 1, 2)
		e.write(t, 2, 2)
		err := e.s.WritePart(samplePart(2, 0, 2, 1, 1))
		if err == nil || !strings.Contains(err.Error(), "complete") || !strings.Contains(err.Error(), e.path(2, manifestName)) {
			t.Fatalf("WritePart into a complete checkpoint: %v", err)
		}
		if err := e.s.DiscardAfter(1); err != nil {
			t.Fatal(err)
		}
		if n, ok := e.latest(t); !ok || n != 1 {
			t.Fatalf("Latest after DiscardAfter(1) = %d, %v", n, ok)
		}
		e.write(t, 2, 2)
	})
}

func TestReadAllForRescaling(t *testing.T) {
	forEachFS(t, func(t *testing.T, e *env) {
		const old, groups = 3, 12
		for p := range old { // process p owns key groups g with g%3 == p
			part := Part{Checkpoint: 5, Epoch: 5, Process: p, Processes: old}
			for g := p; g < groups; g += old {
				part.State = append(part.State, StateBlob{Operator: "count", KeyGroup: uint32(g), Data: []byte{byte(g)}})
			}
			if err := e.s.WritePart(part); err != nil {
				t.Fatal(err)
			}
		}
		if ok, err := e.s.Complete(5, old); !ok || err != nil {
			t.Fatal(ok, err)
		}
		parts, err := e.s.ReadAll(5)
		if err != nil {
			t.Fatal(err)
		}
		for now := range 2 { // restart with 2 processes: now owns g < 6 or g >= 6
			seen := 0
			for _, p := range parts {
				for _, b := range p.State {
					if int(b.KeyGroup)/(groups/2) == now {
						if b.Data[0] != byte(b.KeyGroup) {
							t.Fatalf("key group %d holds %v", b.KeyGroup, b.Data)
						}
						seen++
					}
				}
			}
			if seen != groups/2 {
				t.Fatalf("process %d found %d key groups", now, seen)
			}
		}
	})
}

func TestReadPartErrors(t *testing.T) {
	m := MemFS()
	e := newEnv(t, m, "/ckp", m)
	e.write(t, 4, 2)
	for _, p := range []int{-1, 2} {
		if _, err := e.s.ReadPart(4, p); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Fatalf("ReadPart(4, %d): %v", p, err)
		}
	}
	if _, err := e.s.ReadPart(5, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadPart of a missing checkpoint: %v", err)
	}
	// A valid part that is not the one the manifest records.
	other := samplePart(4, 1, 2, 5, 16)
	other.Meta = map[string]string{"run": "another"}
	if err := m.WriteFile(e.path(4, partName(1)), mustEncode(t, other)); err != nil {
		t.Fatal(err)
	}
	_, err := e.s.ReadPart(4, 1)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), e.path(4, partName(1))) || !strings.Contains(err.Error(), "manifest records") {
		t.Fatalf("ReadPart of a replaced part: %v", err)
	}
	if _, err := e.s.ReadAll(4); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ReadAll with a replaced part: %v", err)
	}
	// A part in the wrong file.
	if err := m.WriteFile(e.path(6, partName(0)), mustEncode(t, samplePart(6, 1, 2, 1, 1))); err == nil {
		t.Fatal("planted a file in a missing directory")
	}
	if err := e.s.WritePart(samplePart(6, 1, 2, 1, 1)); err != nil {
		t.Fatal(err)
	}
	b, _ := m.ReadFile(e.path(6, partName(1)))
	if err := m.WriteFile(e.path(6, partName(0)), b); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.ReadPart(6, 0); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "holds process 1") {
		t.Fatalf("ReadPart of a misplaced part: %v", err)
	}
	if _, err := e.s.Complete(6, 2); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Complete with a misplaced part: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(nil, "/x", nil); err == nil {
		t.Fatal("nil FS opened")
	}
	if _, err := Open(MemFS(), "", nil); err == nil {
		t.Fatal("empty directory opened")
	}
	m := MemFS()
	m.Fail(OpMkdir, 1, nil)
	if _, err := Open(m, "/x", nil); !errors.Is(err, ErrInjected) || !strings.HasPrefix(err.Error(), "checkpoint: open /x") {
		t.Fatalf("Open with a failing mkdir: %v", err)
	}
	s, err := Open(MemFS(), "/x", nil) // nil logger
	if err != nil || s.Dir() != "/x" {
		t.Fatal(err)
	}
	if _, ok, err := s.Latest(); ok || err != nil {
		t.Fatalf("Latest of an empty store: %v, %v", ok, err)
	}
}

func TestParseDir(t *testing.T) {
	for name, want := range map[string]bool{
		"chk-000000000042": true, "chk-1000000000000": true, "chk-42": false,
		"chk-0000000000042": false, "chk-00000000004x": false, "tmp-000000000042": false,
	} {
		if _, ok := parseDir(name); ok != want {
			t.Errorf("parseDir(%q) = %v", name, ok)
		}
	}
}

// Another process may prune a checkpoint between this one's check of it
// and its cleaning of the directory: cleaning a directory that is gone
// is not an error.
func TestRemoveTempsOfAPrunedCheckpoint(t *testing.T) {
	s, err := Open(OSFS(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.removeTemps(27); err != nil {
		t.Errorf("cleaning checkpoint 27, which is gone: %v", err)
	}
}
