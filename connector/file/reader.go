package file

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unsafe"

	"github.com/weirstream/weir"
)

// source is a file source; newDecoder returns the line decoder of one
// reader, so that a decoder may keep per-reader scratch space.
type source[T any] struct {
	paths      []string
	opts       Options
	newDecoder func() func(line string) (T, error)
	name       string // in the job, for the dead letters
}

// Recover implements weir.Recoverable: the source learns its name, and
// passes the call on to Options.DeadLetter.
func (s *source[T]) Recover(rc weir.RecoverContext) error {
	s.name = rc.Source
	if s.opts.DeadLetter != nil {
		return s.opts.DeadLetter.Recover(rc)
	}
	return nil
}

// JSONLines returns a source of the records decoded from the lines of the
// files, one record per non-empty line. decode receives a line without its
// line terminator; the string is never modified, so the record may keep
// substrings of it.
func JSONLines[T any](paths []string, decode func(line string) (T, error), opts Options) weir.Input[T] {
	return &source[T]{
		paths:      slices.Clone(paths),
		opts:       opts,
		newDecoder: func() func(string) (T, error) { return decode },
	}
}

// Open implements weir.Input. It fails if a file cannot be opened.
func (s *source[T]) Open(ctx weir.SourceContext) (weir.Reader[T], error) {
	files, segs, sizes, err := openFiles(s.paths, ctx.Instance, ctx.Parallelism)
	if err != nil {
		return nil, err
	}
	bs := s.opts.BatchSize
	if bs <= 0 {
		bs = defaultBatchSize
	}
	chunk := s.opts.chunkSize
	if chunk <= 0 {
		chunk = defaultChunkSize
	}
	r := &reader[T]{
		paths:  s.paths,
		files:  files,
		segs:   segs,
		decode: s.newDecoder(),
		dl:     s.opts.DeadLetter,
		source: s.name,
		header: s.opts.Header,
		out:    make([]T, 0, bs),
		chunk:  chunk,
	}
	r.initPositions(ctx, sizes, bs)
	return r, nil
}

// reader reads the lines of its segments in order. It reads a file in
// chunks, converts each chunk to a string once, and hands the decoder
// substrings of it.
type reader[T any] struct {
	paths  []string
	files  []*os.File
	segs   []segment
	decode func(string) (T, error)
	dl     *DeadLetter
	source string
	header bool
	out    []T
	buf    []byte
	chunk  int   // bytes to read at a time
	err    error // sticky

	// The segment being read, segs[seg].
	seg   int
	ready bool     // the segment has been started
	f     *os.File // its file, files[fk]
	fk    int
	hi    int64  // its end
	s     string // the current chunk
	p     int    // the start of the next line in s
	off   int64  // the file offset of s[0]
	eof   bool   // s reaches the end of the file
	start int64  // the file offset of the segment's first line
	lines int64  // the lines taken from the segment so far
	at    int64  // the file offset of the line next returned last

	pos positions // what Position needs
	// known, by file, is the last point whose line number was counted.
	known []lineMark
}

// Read implements weir.Reader.
func (r *reader[T]) Read() ([]T, error) {
	r.pos.marks = r.pos.marks[:0]
	if r.err != nil {
		return nil, r.err
	}
	out := r.out[:0]
	for len(out) < cap(out) {
		line, ok, err := r.next()
		if err != nil {
			r.err = err
			return nil, err
		}
		if !ok {
			break
		}
		if len(line) == 0 || r.header && r.start == 0 && r.lines == 1 {
			continue
		}
		v, err := r.decode(line)
		if err != nil {
			if r.dl == nil {
				r.err = r.lineError(err)
				return nil, r.err
			}
			if err := r.deadLetter(line, err); err != nil {
				r.err = err
				return nil, r.err
			}
			continue
		}
		out = append(out, v)
		r.mark()
	}
	if len(out) == 0 {
		return nil, io.EOF
	}
	return out, nil
}

// Close implements weir.Reader.
func (r *reader[T]) Close() error {
	r.s, r.buf, r.out = "", nil, nil
	if r.err == nil {
		r.err = io.EOF
	}
	if err := closeAll(r.files); err != nil {
		return fmt.Errorf("file: %w", err)
	}
	return nil
}

// open makes file k the current file, r.f, opening it if it is not open
// and closing the one read before: a reader holds one file open at a time.
func (r *reader[T]) open(k int) error {
	if r.f != nil && r.fk != k {
		r.f.Close()
		r.files[r.fk], r.f = nil, nil
	}
	if r.files[k] == nil {
		f, err := os.Open(r.paths[k])
		if err != nil {
			return fmt.Errorf("file: %w", err)
		}
		r.files[k] = f
	}
	r.f, r.fk = r.files[k], k
	return nil
}

// next returns the next line the reader owns, without its terminator, or
// false at the end of the last segment.
func (r *reader[T]) next() (string, bool, error) {
	for {
		if !r.ready {
			if r.seg >= len(r.segs) {
				return "", false, nil
			}
			if err := r.begin(); err != nil {
				return "", false, err
			}
		}
		if r.off+int64(r.p) >= r.hi {
			// The next line starts in the following segment.
			r.ready = false
			r.seg++
			continue
		}
		rest := r.s[r.p:]
		r.at = r.off + int64(r.p)
		if k := strings.IndexByte(rest, '\n'); k >= 0 {
			r.p += k + 1
			r.lines++
			if k > 0 && rest[k-1] == '\r' {
				k--
			}
			return rest[:k], true, nil
		}
		if r.eof {
			if len(rest) == 0 {
				r.ready = false
				r.seg++
				continue
			}
			r.p = len(r.s)
			r.lines++
			return strings.TrimSuffix(rest, "\r"), true, nil
		}
		if err := r.fill(); err != nil {
			return "", false, err
		}
	}
}

// begin starts the segment segs[seg]: unless it starts the file, it skips
// the line that crosses its start, which belongs to the previous segment.
func (r *reader[T]) begin() error {
	sg := r.segs[r.seg]
	if err := r.open(sg.file); err != nil {
		return err
	}
	r.hi = sg.hi
	r.s, r.p, r.eof, r.lines = "", 0, false, 0
	r.off = max(sg.lo-1, 0)
	// A line starts at lo if the byte before it is a newline, so the skip
	// starts there.
	for sg.lo > 0 {
		if k := strings.IndexByte(r.s[r.p:], '\n'); k >= 0 {
			r.p += k + 1
			break
		}
		r.p = len(r.s)
		if r.eof || r.off+int64(r.p) >= r.hi {
			break // no line starts in the segment
		}
		if err := r.fill(); err != nil {
			return err
		}
	}
	r.start = r.off + int64(r.p)
	r.pos.starts[r.seg] = r.start
	r.ready = true
	return nil
}

// fill reads the next chunk of the file, keeping the unread rest of the
// current one at its start. A line longer than half the buffer grows it, so
// that each read is big.
//
// Every chunk is read into a buffer of its own, which then becomes the
// string the decoder's substrings point into (without a copy): the
// previous chunk's buffer may still be referenced by records in flight, so
// it is never written again.
func (r *reader[T]) fill() error {
	rest := r.s[r.p:]
	size := r.chunk
	if len(rest) > size/2 {
		size = 2 * len(rest) // a long line: room for it and as much again
	}
	if left := r.pos.sizes[r.fk] - (r.off + int64(len(r.s))); left >= 0 && int64(size) > int64(len(rest))+left+1 {
		// The end of the file is near (a small file): a buffer for what
		// is left, and a byte more to see the end.
		size = len(rest) + int(left) + 1
	}
	r.buf = make([]byte, size)
	n := copy(r.buf, rest)
	m, err := r.f.ReadAt(r.buf[n:], r.off+int64(len(r.s)))
	switch {
	case err == io.EOF:
		r.eof = true
	case err != nil:
		return fmt.Errorf("file: %w", err)
	}
	r.off += int64(r.p)
	r.s, r.p = "", 0
	if n+m > 0 {
		r.s = unsafe.String(&r.buf[0], n+m)
	}
	return nil
}
