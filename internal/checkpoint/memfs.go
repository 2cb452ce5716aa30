package checkpoint

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Mem is an in-memory FS for tests that models durability and injects
// faults. A file's contents are durable once synced; a file's name once
// its directory is synced. Directory creation and removal are durable at
// once. Mem is safe for concurrent use.
type Mem struct {
	mu      sync.Mutex
	dirs    map[string]bool
	files   map[string]*memNode // the namespace as seen now
	durable map[string]*memNode // the namespace as of each directory's last SyncDir
	calls   [numOps]int
	faults  []memFault
	down    bool // crashed: every operation fails until Crash
	gen     int  // bumped by Crash; handles of older generations are dead
	seq     int
}

type memNode struct{ data, synced []byte }

type memFault struct {
	op    Op
	at    int
	err   error
	crash bool
}

// MemFS returns an empty in-memory FS.
func MemFS() *Mem {
	return &Mem{dirs: map[string]bool{}, files: map[string]*memNode{}, durable: map[string]*memNode{}}
}

func isRoot(p string) bool { return filepath.Dir(p) == p }

func (m *Mem) dirExists(p string) bool { return isRoot(p) || m.dirs[p] }

func notExist(op, path string) error { return &fs.PathError{Op: op, Path: path, Err: fs.ErrNotExist} }

// MkdirAll implements FS.
func (m *Mem) MkdirAll(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.hit(OpMkdir); err != nil {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	for p := filepath.Clean(dir); !isRoot(p); p = filepath.Dir(p) {
		if _, ok := m.files[p]; ok {
			return &fs.PathError{Op: "mkdir", Path: p, Err: errors.New("not a directory")}
		}
		m.dirs[p] = true
	}
	return nil
}

// CreateTemp implements FS.
func (m *Mem) CreateTemp(dir, pattern string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.hit(OpCreate); err != nil {
		return nil, &fs.PathError{Op: "createtemp", Path: dir, Err: err}
	}
	dir = filepath.Clean(dir)
	if !m.dirExists(dir) {
		return nil, notExist("createtemp", dir)
	}
	for {
		m.seq++
		name := pattern + strconv.Itoa(m.seq)
		if i := strings.LastIndex(pattern, "*"); i >= 0 {
			name = pattern[:i] + strconv.Itoa(m.seq) + pattern[i+1:]
		}
		p := filepath.Join(dir, name)
		if _, ok := m.files[p]; ok || m.dirs[p] {
			continue
		}
		n := &memNode{}
		m.files[p] = n
		return &memFile{m: m, name: p, node: n, gen: m.gen}, nil
	}
}

// ReadFile implements FS.
func (m *Mem) ReadFile(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.hit(OpReadFile); err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	p := filepath.Clean(name)
	n, ok := m.files[p]
	if !ok {
		if m.dirExists(p) {
			return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
		}
		return nil, notExist("open", name)
	}
	return slices.Clone(n.data), nil
}

// ReadRange implements FS.
func (m *Mem) ReadRange(name string, off int64, n int) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.hit(OpReadRange); err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	node, ok := m.files[filepath.Clean(name)]
	if !ok {
		return nil, notExist("open", name)
	}
	if off < 0 || n < 0 {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	if off > int64(len(node.data)) || int64(n) > int64(len(node.data))-off {
		return nil, &fs.PathError{Op: "read", Path: name, Err: io.ErrUnexpectedEOF}
	}
	return slices.Clone(node.data[off : off+int64(n)]), nil
}

// Rename implements FS.
func (m *Mem) Rename(oldpath, newpath string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.hit(OpRename); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	o, n := filepath.Clean(oldpath), filepath.Clean(newpath)
	node, ok := m.files[o]
	if !ok || !m.dirExists(filepath.Dir(n)) {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrNotExist}
	}
	if m.dirExists(n) {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: errors.New("is a directory")}
	}
	delete(m.files, o)
	m.files[n] = node
	return nil
}

// Remove implements FS.
func (m *Mem) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.hit(OpRemove); err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	p := filepath.Clean(name)
	if _, ok := m.files[p]; ok {
		delete(m.files, p)
		return nil
	}
	if !m.dirs[p] {
		return notExist("remove", name)
	}
	for q := range m.files {
		if filepath.Dir(q) == p {
			return &fs.PathError{Op: "remove", Path: name, Err: errors.New("directory not empty")}
		}
	}
	for q := range m.dirs {
		if filepath.Dir(q) == p {
			return &fs.PathError{Op: "remove", Path: name, Err: errors.New("directory not empty")}
		}
	}
	delete(m.dirs, p)
	return nil
}

// RemoveAll implements FS. It is durable at once.
func (m *Mem) RemoveAll(path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.hit(OpRemove); err != nil {
		return &fs.PathError{Op: "removeall", Path: path, Err: err}
	}
	p := filepath.Clean(path)
	under := func(q string) bool { return q == p || strings.HasPrefix(q, p+string(filepath.Separator)) }
	maps.DeleteFunc(m.files, func(q string, _ *memNode) bool { return under(q) })
	maps.DeleteFunc(m.durable, func(q string, _ *memNode) bool { return under(q) })
	maps.DeleteFunc(m.dirs, func(q string, _ bool) bool { return under(q) })
	return nil
}

// ReadDir implements FS.
func (m *Mem) ReadDir(dir string) ([]DirEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.hit(OpReadDir); err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: err}
	}
	p := filepath.Clean(dir)
	if !m.dirExists(p) {
		return nil, notExist("readdir", dir)
	}
	var out []DirEntry
	for q := range m.dirs {
		if filepath.Dir(q) == p && q != p {
			out = append(out, DirEntry{Name: filepath.Base(q), IsDir: true})
		}
	}
	for q := range m.files {
		if filepath.Dir(q) == p {
			out = append(out, DirEntry{Name: filepath.Base(q)})
		}
	}
	slices.SortFunc(out, func(a, b DirEntry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// SyncDir implements FS.
func (m *Mem) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.hit(OpSyncDir); err != nil {
		return &fs.PathError{Op: "sync", Path: dir, Err: err}
	}
	p := filepath.Clean(dir)
	if !m.dirExists(p) {
		return notExist("sync", dir)
	}
	for q, n := range m.files {
		if filepath.Dir(q) == p {
			m.durable[q] = n
		}
	}
	for q := range m.durable {
		if _, ok := m.files[q]; !ok && filepath.Dir(q) == p {
			delete(m.durable, q)
		}
	}
	return nil
}

type memFile struct {
	m      *Mem
	name   string
	node   *memNode
	gen    int
	closed bool
}

func (f *memFile) Name() string { return f.name }

// op checks the handle and counts a call of op; called with f.m.mu held.
func (f *memFile) op(op Op) error {
	var err error
	switch {
	case f.closed:
		err = fs.ErrClosed
	case f.gen != f.m.gen:
		err = ErrCrashed
	default:
		err = f.m.hit(op)
	}
	if err != nil {
		return &fs.PathError{Op: op.String(), Path: f.name, Err: err}
	}
	return nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.op(OpWrite); err != nil {
		return 0, err
	}
	f.node.data = append(f.node.data, p...)
	return len(p), nil
}

func (f *memFile) Sync() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.op(OpSync); err != nil {
		return err
	}
	f.node.synced = slices.Clone(f.node.data)
	return nil
}

func (f *memFile) Close() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.op(OpClose); err != nil {
		return err
	}
	f.closed = true
	return nil
}
