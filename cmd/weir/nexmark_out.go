package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/weirstream/weir"
)

// nexmarkOut is the CSV output of weir run nexmark: --out FILE, written
// to a temporary file in its directory and renamed at the end, so that a
// run that fails leaves no partial file, or standard output. Rows go
// straight to the file as the query emits them; in a job with
// checkpoints they are collected instead (weir.Collect is saved in the
// checkpoints, so a restarted run writes each row once) and written at
// the end. Process 0 writes it; on the others it is never called.
type nexmarkOut struct {
	path    string // "" for standard output
	header  string
	collect *weir.Collect[string] // with checkpoints
	tmp     *os.File

	mu   sync.Mutex
	w    *bufio.Writer
	rows int64
}

func newNexmarkOut(path, header string, checkpoints bool) (*nexmarkOut, error) {
	o := &nexmarkOut{path: path, header: header}
	if checkpoints {
		o.collect = &weir.Collect[string]{}
		return o, nil
	}
	return o, o.open()
}

// open starts the output with its header.
func (o *nexmarkOut) open() error {
	var w io.Writer = os.Stdout
	if o.path != "" {
		f, err := os.CreateTemp(filepath.Dir(o.path), "."+filepath.Base(o.path)+".partial-*")
		if err != nil {
			return fmt.Errorf("--out %s: %v", o.path, unwrapPath(err))
		}
		if err := f.Chmod(0o644); err != nil {
			f.Close()
			os.Remove(f.Name())
			return err
		}
		o.tmp, w = f, f
	}
	o.w = bufio.NewWriterSize(w, 1<<20)
	o.w.WriteString(o.header + "\n")
	return nil
}

// output is the weir.Output the query's CSV sink writes to.
func (o *nexmarkOut) output() weir.Output[string] {
	if o.collect != nil {
		return o.collect
	}
	return o
}

// Write implements weir.Output.
func (o *nexmarkOut) Write(batch []string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, l := range batch {
		o.w.WriteString(l)
		o.w.WriteByte('\n')
	}
	o.rows += int64(len(batch))
	return nil
}

// EndEpoch implements weir.EpochSink: the rows of an epoch are written
// when it ends.
func (o *nexmarkOut) EndEpoch(uint64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.w.Flush()
}

// Close implements weir.Output; finish completes the file.
func (o *nexmarkOut) Close() error { return o.EndEpoch(0) }

// finish writes the collected rows, if any, and puts the file in place.
// It returns the number of rows.
func (o *nexmarkOut) finish() (int64, error) {
	if o.collect != nil {
		if err := o.open(); err != nil {
			return 0, err
		}
		if err := o.Write(o.collect.Records()); err != nil {
			return 0, err
		}
	}
	err := o.w.Flush()
	if o.tmp != nil {
		err = errors.Join(err, o.tmp.Close())
		if err == nil {
			err = os.Rename(o.tmp.Name(), o.path)
		}
		if err != nil {
			os.Remove(o.tmp.Name())
			return 0, fmt.Errorf("--out %s: %v", o.path, err)
		}
		o.tmp = nil
	}
	return o.rows, err
}

// abort removes the temporary file of a run that failed.
func (o *nexmarkOut) abort() {
	if o.tmp != nil {
		o.tmp.Close()
		os.Remove(o.tmp.Name())
	}
}
