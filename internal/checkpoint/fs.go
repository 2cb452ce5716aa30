package checkpoint

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"runtime"
)

// FS is the file system the store writes through, so that tests can inject
// faults. Paths are in the host's syntax (the store builds them with
// path/filepath). Errors for missing files must match fs.ErrNotExist.
type FS interface {
	// MkdirAll creates dir and any missing parents.
	MkdirAll(dir string) error
	// CreateTemp creates a new file in dir, named by pattern with its last
	// "*" replaced by a unique string, open for writing.
	CreateTemp(dir, pattern string) (File, error)
	// ReadFile returns the contents of a file.
	ReadFile(name string) ([]byte, error)
	// ReadRange returns the n bytes of a file from offset off; a file
	// that ends before them is an error matching io.ErrUnexpectedEOF.
	ReadRange(name string, off int64, n int) ([]byte, error)
	// Rename atomically replaces newpath by oldpath.
	Rename(oldpath, newpath string) error
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// RemoveAll removes path and everything under it; a missing path is
	// not an error.
	RemoveAll(path string) error
	// ReadDir lists dir, sorted by name.
	ReadDir(dir string) ([]DirEntry, error)
	// SyncDir makes the entries of dir (creations, renames, removals)
	// durable.
	SyncDir(dir string) error
}

// File is a file being written.
type File interface {
	io.Writer
	Name() string // the full path, as given to FS.Rename
	Sync() error  // make the contents durable
	Close() error
}

// DirEntry is one entry of a directory listing.
type DirEntry struct {
	Name  string
	IsDir bool
}

// OSFS returns the FS of the operating system.
func OSFS() FS { return osFS{} }

type osFS struct{}

func (osFS) MkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

func (osFS) CreateTemp(dir, pattern string) (File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	// os.CreateTemp makes the file 0600; checkpoints are read by the
	// other processes of the job, which may run as other users.
	if err := f.Chmod(0o644); err != nil && runtime.GOOS != "windows" {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

func (osFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

func (osFS) ReadRange(name string, off int64, n int) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return b, nil
}

func (osFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) RemoveAll(path string) error { return os.RemoveAll(path) }

func (osFS) ReadDir(dir string) ([]DirEntry, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]DirEntry, len(es))
	for i, e := range es {
		out[i] = DirEntry{Name: e.Name(), IsDir: e.IsDir()}
	}
	return out, nil
}

func (osFS) SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // directories cannot be opened for syncing there
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}
