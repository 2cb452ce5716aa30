package file

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/weirstream/weir"
)

// DeadLetter collects the records sources reject, as Letters, one JSON
// line each (see Letter). It is safe for concurrent use, so the readers of
// a source, or of several sources, can share one. Each letter is written
// with one Write, unbuffered.
//
// A DeadLetter made by OpenDeadLetter writes a file and is exactly-once
// across restarts: see OpenDeadLetter. One made by NewDeadLetter writes to
// any writer and is at-least-once: a job restarted from a checkpoint
// writes again the letters of the records it reads again.
type DeadLetter struct {
	mu   sync.Mutex
	w    io.Writer // nil: OpenDeadLetter's file is not open yet
	base string    // OpenDeadLetter's path; "" for NewDeadLetter
	path string    // the file this process writes
	f    *os.File
	// seen holds the positions of the letters in the files at a restart.
	seen   map[letterKey]bool
	n      int64
	dirty  bool  // written since the last Sync
	err    error // sticky: a write failed
	buf    []byte
	closed bool
}

var errClosed = errors.New("file: dead letter closed")

// NewDeadLetter returns a DeadLetter that writes to w. It does not
// deduplicate: after a restart from a checkpoint, the letters of the
// records read again are written again (at-least-once).
func NewDeadLetter(w io.Writer) *DeadLetter { return &DeadLetter{w: w} }

// OpenDeadLetter returns a DeadLetter that writes the file path, or, in a
// job of several processes, process I writes path.process-I. It opens its
// file when the job starts (Recover), or at the first letter outside a
// job, so path need not exist yet; its directory must.
//
// Its letters are exactly-once across restarts, by position: a job that
// starts from scratch empties the file, as it does every output; a job
// restored from a checkpoint keeps it, cuts off a last line that a crash
// left incomplete, and loads the positions (source, file or split,
// offset) of the letters in path and in every path.process-N: a letter at
// a position already there is not written again. The other processes'
// files count because a run with another number of processes splits the
// input otherwise, so a record read again may have been rejected by
// another process before. Together, the files then hold each rejected
// record once: those before the checkpoint were written and are not read
// again; those after it are read again, and written unless they are there.
//
// A file that no process of the run writes (path in a distributed run,
// path.process-N for N at least the number of processes) is left by a run
// with more or fewer processes; process 0 counts its letters, and removes
// it when the job starts from scratch.
//
// The letters are written with one Write each, so that they are in the
// operating system as soon as written, and synced to disk whenever a
// reader's position is taken for a checkpoint (Sync), so that a
// checkpoint never covers a letter that is lost.
func OpenDeadLetter(path string) (*DeadLetter, error) {
	if path == "" {
		return nil, errors.New("file: dead letter: empty path")
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("file: dead letter: %s is a directory", path)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("file: dead letter: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("file: dead letter: %s is not a directory", filepath.Dir(path))
	}
	return &DeadLetter{base: path, path: path}, nil
}

// Path returns the file this process writes: after Recover, with its
// process suffix in a distributed job; "" for NewDeadLetter.
func (d *DeadLetter) Path() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.path
}

// Count returns the number of letters of this process: those written, and,
// after a restart from a checkpoint, those found in its file (and on
// process 0 those in files no process of the run writes). Summed over the
// job's processes, it is the number of the job's dead letters.
func (d *DeadLetter) Count() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// Add writes a letter, unless one with its position is in the files
// already (OpenDeadLetter, after a restart). Readers of the sources of
// this package call it; a reader of another kind of source may too.
func (d *DeadLetter) Add(l Letter) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.err != nil:
		return d.err
	case d.closed:
		return errClosed
	case d.seen[keyOf(l)]:
		return nil
	case d.w == nil:
		// Outside a job: a fresh start in one process.
		if err := d.open(true); err != nil {
			return err
		}
	}
	var err error
	if d.buf, err = l.appendJSON(d.buf[:0]); err != nil {
		return fmt.Errorf("file: dead letter: %w", err)
	}
	if _, err := d.w.Write(d.buf); err != nil {
		d.err = fmt.Errorf("file: dead letter: %w", err) // a partial line must stay the last
		return d.err
	}
	d.n++
	d.dirty = true
	return nil
}

// Sync makes the letters written so far durable, if the DeadLetter writes
// a file and wrote since the last Sync. The file sources' readers call it
// when their position is taken; a reader of another kind of source that
// calls Add should too.
func (d *DeadLetter) Sync() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sync()
}

func (d *DeadLetter) sync() error {
	if !d.dirty || d.f == nil {
		return nil
	}
	if err := d.f.Sync(); err != nil {
		return fmt.Errorf("file: dead letter: %w", err)
	}
	d.dirty = false
	return nil
}

// Close syncs and closes the file of an OpenDeadLetter; later letters fail
// until Recover starts another run. It does not close NewDeadLetter's
// writer.
func (d *DeadLetter) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	return d.closeFile()
}

func (d *DeadLetter) closeFile() error {
	if d.f == nil {
		return nil
	}
	err := d.sync()
	if cerr := d.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("file: dead letter: %w", cerr)
	}
	d.f, d.w = nil, nil
	return err
}

// open opens d.path for appending, emptied first if fresh.
func (d *DeadLetter) open(fresh bool) error {
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if fresh {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(d.path, flags, 0o644)
	if err == nil {
		err = syncDir(filepath.Dir(d.path)) // the file, if new, is there
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return fmt.Errorf("file: dead letter: %w", err)
	}
	d.f, d.w = f, f
	return nil
}

// Recover implements weir.Recoverable; a source passes its Recover on. It
// opens the file this process writes, emptied if the job starts from
// scratch, and otherwise loads the letters of the files (see
// OpenDeadLetter). It does nothing for NewDeadLetter.
func (d *DeadLetter) Recover(rc weir.RecoverContext) error {
	if d.base == "" {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.closeFile(); err != nil {
		return err
	}
	d.path = d.base
	if rc.Processes > 1 {
		d.path = fmt.Sprintf("%s.process-%d", d.base, rc.Process)
	}
	d.seen, d.n, d.err, d.closed, d.dirty = nil, 0, nil, false, false
	if err := d.load(rc); err != nil {
		return err
	}
	return d.open(rc.Checkpoint == 0)
}
