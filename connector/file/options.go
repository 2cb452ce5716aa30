package file

import (
	"io"
	"sync"
)

// Options configures a file source.
type Options struct {
	// DeadLetter, if set, receives the lines the decoder rejects, and the
	// reader goes on. Without it, a rejected line fails the job.
	DeadLetter *DeadLetter
	// BatchSize is the largest number of records per Read (default 4096).
	BatchSize int
	// Header skips the first line of each file.
	Header bool

	// chunkSize is the size of the reads from a file (default 1 MiB).
	chunkSize int
}

const (
	defaultBatchSize = 4096
	defaultChunkSize = 1 << 20
)

// DeadLetter collects rejected lines. It writes each one unchanged, without
// its line terminator, followed by "\n". It is safe for concurrent use, so
// the readers of a source, or of several sources, can share one.
type DeadLetter struct {
	mu sync.Mutex
	w  io.Writer
	n  int64
}

// NewDeadLetter returns a DeadLetter that writes to w. The writes are not
// buffered beyond what w does.
func NewDeadLetter(w io.Writer) *DeadLetter { return &DeadLetter{w: w} }

// Count returns the number of lines written so far.
func (d *DeadLetter) Count() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

func (d *DeadLetter) add(line string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := io.WriteString(d.w, line+"\n"); err != nil {
		return err
	}
	d.n++
	return nil
}
