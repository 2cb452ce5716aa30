package checkpoint

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
)

// Op names an FS operation, for fault injection with Mem.
type Op int

// The operations of Mem that faults can be injected into.
const (
	OpCreate    Op = iota // FS.CreateTemp
	OpWrite               // File.Write
	OpSync                // File.Sync
	OpClose               // File.Close
	OpRename              // FS.Rename
	OpRemove              // FS.Remove and FS.RemoveAll
	OpReadFile            // FS.ReadFile
	OpReadDir             // FS.ReadDir
	OpSyncDir             // FS.SyncDir
	OpMkdir               // FS.MkdirAll
	OpReadRange           // FS.ReadRange
	numOps
)

var opNames = [numOps]string{"create", "write", "sync", "close", "rename", "remove", "readfile", "readdir", "syncdir", "mkdir", "readrange"}

func (o Op) String() string {
	if o < 0 || o >= numOps {
		return "Op(" + strconv.Itoa(int(o)) + ")"
	}
	return opNames[o]
}

// ErrInjected is the default error of a fault injected with Mem.Fail.
var ErrInjected = errors.New("checkpoint: injected fault")

// ErrCrashed is returned by every operation of a Mem that has crashed (see
// Mem.CrashAt) until Mem.Crash restarts it.
var ErrCrashed = errors.New("checkpoint: file system crashed")

// CrashMode says what survives Mem.Crash.
type CrashMode int

const (
	// LoseUnsynced reverts every entry created, renamed or removed since
	// its directory's last SyncDir, and every file's contents to its last
	// Sync: the least a POSIX file system promises.
	LoseUnsynced CrashMode = iota
	// KeepNames keeps the namespace as it was but reverts file contents to
	// their last Sync, like a file system that journals metadata only.
	KeepNames
)

// Fail makes the nth call of op from now (1 for the next) fail with err,
// or with ErrInjected if err is nil. A failed write writes nothing.
func (m *Mem) Fail(op Op, nth int, err error) {
	if err == nil {
		err = ErrInjected
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.faults = append(m.faults, memFault{op: op, at: m.calls[op] + nth, err: err})
}

// CrashAt makes the nth call of op from now (1 for the next) not happen:
// the machine loses power instead, and that call and every later one fails
// with ErrCrashed until Crash restarts the file system.
func (m *Mem) CrashAt(op Op, nth int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.faults = append(m.faults, memFault{op: op, at: m.calls[op] + nth, err: ErrCrashed, crash: true})
}

// Crash simulates a power loss now, followed by a restart: what survives
// depends on mode. Files open before it can no longer be used.
func (m *Mem) Crash(mode CrashMode) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.down = false
	m.gen++
	if mode == LoseUnsynced {
		m.files = maps.Clone(m.durable)
	}
	for p, n := range m.files {
		if !m.dirExists(filepath.Dir(p)) {
			delete(m.files, p)
			continue
		}
		n.data = slices.Clone(n.synced)
	}
	m.durable = maps.Clone(m.files)
}

// hit counts a call of op and returns the error it must fail with, if any.
func (m *Mem) hit(op Op) error {
	if m.down {
		return ErrCrashed
	}
	m.calls[op]++
	for i, f := range m.faults {
		if f.op == op && f.at == m.calls[op] {
			m.faults = slices.Delete(m.faults, i, i+1)
			m.down = f.crash
			return f.err
		}
	}
	return nil
}

// WriteFile creates or replaces a file with durable contents, bypassing
// faults: a test's way to plant files (say, a stale temporary one).
func (m *Mem) WriteFile(name string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := filepath.Clean(name)
	if !m.dirExists(filepath.Dir(p)) {
		return notExist("open", name)
	}
	n := &memNode{data: slices.Clone(data), synced: slices.Clone(data)}
	m.files[p], m.durable[p] = n, n
	return nil
}

// corrupt replaces a file's contents, durably, with f of them.
func (m *Mem) corrupt(name string, f func([]byte) ([]byte, error)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.files[filepath.Clean(name)]
	if !ok {
		return notExist("open", name)
	}
	d, err := f(slices.Clone(n.data))
	if err != nil {
		return fmt.Errorf("checkpoint: %s: %w", name, err)
	}
	n.data, n.synced = d, slices.Clone(d)
	return nil
}

// Truncate cuts a file to size bytes, as damage on disk.
func (m *Mem) Truncate(name string, size int) error {
	return m.corrupt(name, func(d []byte) ([]byte, error) {
		if size < 0 || size > len(d) {
			return nil, fmt.Errorf("truncate to %d: file has %d bytes", size, len(d))
		}
		return d[:size], nil
	})
}

// FlipBit inverts bit (counted from the first byte's least significant
// bit) of a file, as damage on disk.
func (m *Mem) FlipBit(name string, bit int) error {
	return m.corrupt(name, func(d []byte) ([]byte, error) {
		if bit < 0 || bit >= 8*len(d) {
			return nil, fmt.Errorf("flip bit %d: file has %d bits", bit, 8*len(d))
		}
		d[bit/8] ^= 1 << (bit % 8)
		return d, nil
	})
}

// Files lists the paths of all files, sorted.
func (m *Mem) Files() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.files))
}
