package checkpoint

import (
	"errors"
	"io/fs"
	"slices"
	"testing"
)

func TestMemFS(t *testing.T) {
	m := MemFS()
	if err := m.MkdirAll("/a/b"); err != nil {
		t.Fatal(err)
	}
	f, err := m.CreateTemp("/a/b", "x-*.tmp")
	if err != nil || f.Name() != "/a/b/x-1.tmp" {
		t.Fatalf("CreateTemp: %v, %v", f, err)
	}
	f.Write([]byte("hello"))
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Write([]byte(" world")) // not synced
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(nil); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
	if err := m.Rename("/a/b/x-1.tmp", "/a/b/x"); err != nil {
		t.Fatal(err)
	}
	if err := m.Rename("/a/b/x-1.tmp", "/a/b/y"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("rename of a missing file: %v", err)
	}
	es, err := m.ReadDir("/a")
	if err != nil || !slices.Equal(es, []DirEntry{{Name: "b", IsDir: true}}) {
		t.Fatalf("ReadDir: %v, %v", es, err)
	}
	if err := m.Remove("/a/b"); err == nil {
		t.Fatal("removed a non-empty directory")
	}
	if _, err := m.ReadFile("/a/b"); err == nil {
		t.Fatal("read a directory")
	}
	m.Crash(KeepNames)
	if b, _ := m.ReadFile("/a/b/x"); string(b) != "hello" {
		t.Fatalf("after a crash keeping names: %q", b)
	}
	h, _ := m.CreateTemp("/a/b", "h")
	h.Sync()
	m.Rename(h.Name(), "/a/b/y")
	m.Crash(LoseUnsynced)
	if _, err := m.ReadFile("/a/b/x"); err != nil {
		t.Fatalf("file kept by the last crash: %v", err)
	}
	if _, err := m.ReadFile("/a/b/y"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("unsynced rename survived: %v", err)
	}

	g, _ := m.CreateTemp("/a", "g")
	m.Crash(LoseUnsynced)
	if _, err := g.Write([]byte("x")); !errors.Is(err, ErrCrashed) {
		t.Fatalf("write through a handle from before a crash: %v", err)
	}
	m.CrashAt(OpReadDir, 2)
	m.ReadDir("/a")
	for range 2 {
		if _, err := m.ReadDir("/a"); !errors.Is(err, ErrCrashed) {
			t.Fatalf("ReadDir after the crash point: %v", err)
		}
	}
	m.Crash(LoseUnsynced)
	m.Fail(OpMkdir, 1, fs.ErrPermission)
	if err := m.MkdirAll("/c"); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("injected error: %v", err)
	}
	if err := m.WriteFile("/a/f", []byte{1}); err != nil {
		t.Fatal(err)
	}
	if m.FlipBit("/a/f", 8) == nil || m.Truncate("/a/f", 2) == nil || m.FlipBit("/a/none", 0) == nil {
		t.Fatal("damage out of range accepted")
	}
	if err := m.RemoveAll("/a"); err != nil || len(m.Files()) != 0 {
		t.Fatalf("RemoveAll: %v, %v", err, m.Files())
	}
	if Op(99).String() != "Op(99)" || OpSyncDir.String() != "syncdir" {
		t.Fatal("Op.String")
	}
}
