package file

import (
	"bytes"
	"fmt"
	"os"
)

// lineMark is a point of a file whose line number is known: lines
// newlines come before offset off.
type lineMark struct{ off, lines int64 }

// lineNumber returns the number, in its file, of the line next returned
// last. The newlines before the segment's first line are counted only now,
// so that the happy path does not pay for it, and once per segment, from
// the last point counted in the same file: a reader's segments come in
// the order of the files, so all its bad lines cost at most one pass over
// its files.
func (r *reader[T]) lineNumber() (int64, error) {
	if r.known == nil {
		r.known = make([]lineMark, len(r.paths))
	}
	f := r.segs[r.seg].file
	k := r.known[f]
	if k.off > r.start {
		k = lineMark{}
	}
	if k.off < r.start {
		n, err := countLines(r.f, k.off, r.start)
		if err != nil {
			return 0, err
		}
		k = lineMark{off: r.start, lines: k.lines + n}
		r.known[f] = k
	}
	return k.lines + r.lines, nil
}

// lineError names the file and line of the line just taken.
func (r *reader[T]) lineError(err error) error {
	path := r.paths[r.segs[r.seg].file]
	n, cerr := r.lineNumber()
	if cerr != nil {
		return fmt.Errorf("file: %s: line %d after offset %d: %w", path, r.lines, r.start, err)
	}
	return fmt.Errorf("file: %s:%d: %w", path, n, err)
}

// deadLetter writes the line just taken, which the decoder rejected with
// reason, to the dead letter.
func (r *reader[T]) deadLetter(line string, reason error) error {
	path := r.paths[r.segs[r.seg].file]
	n, err := r.lineNumber()
	if err != nil {
		return fmt.Errorf("file: %s: %w", path, err)
	}
	l := Letter{Source: r.source, File: path, Line: n, Offset: r.at, Reason: reason.Error(), Record: line}
	return r.dl.Add(l)
}

// countLines returns the number of newlines in the bytes [from, to) of f.
func countLines(f *os.File, from, to int64) (int64, error) {
	buf := make([]byte, 64<<10)
	var lines int64
	for off := from; off < to; {
		b := buf[:min(int64(len(buf)), to-off)]
		k, err := f.ReadAt(b, off)
		lines += int64(bytes.Count(b[:k], []byte{'\n'}))
		off += int64(k)
		if err != nil && off < to {
			return 0, err
		}
	}
	return lines, nil
}
