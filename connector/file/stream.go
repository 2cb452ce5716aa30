package file

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/weirstream/weir"
)

// LinesFrom reads the lines of r, which can be read only once, from its
// start to its end (standard input, a pipe), without their line endings;
// like Lines, it skips empty lines. Instance 0 of the source reads all of
// r and the other instances read nothing, so it suits one process. Its
// reader cannot say where it is (it is not weir.Seekable), so a job with
// checkpoints refuses it. name names r in errors ("stdin", say).
//
// A goroutine reads r in chunks, so that a Read with no complete line at
// hand returns within a few milliseconds and epochs are cut on time while
// r is slow. If the job ends before r does, that goroutine stays blocked
// in r.Read until r yields more or is closed.
func LinesFrom(name string, r io.Reader, opts Options) weir.Input[string] {
	return &streamSource{name: name, r: r, opts: opts}
}

type streamSource struct {
	name   string
	r      io.Reader
	opts   Options
	opened atomic.Bool
}

// Open implements weir.Input.
func (s *streamSource) Open(ctx weir.SourceContext) (weir.Reader[string], error) {
	if ctx.Instance != 0 {
		return emptyReader{}, nil
	}
	if s.opened.Swap(true) {
		return nil, fmt.Errorf("file: %s can be read only once", s.name)
	}
	bs := s.opts.BatchSize
	if bs <= 0 {
		bs = defaultBatchSize
	}
	chunk := s.opts.chunkSize
	if chunk <= 0 {
		chunk = defaultChunkSize
	}
	r := &streamReader{name: s.name, header: s.opts.Header, out: make([]string, 0, bs),
		chunks: make(chan []byte, 2), stop: make(chan struct{})}
	go r.pump(s.r, chunk)
	return r, nil
}

type emptyReader struct{}

func (emptyReader) Read() ([]string, error) { return nil, io.EOF }
func (emptyReader) Close() error            { return nil }

// streamReader cuts the chunks its pump reads into lines. Every chunk is
// a buffer of its own, never written again once it is a string, since the
// lines handed out point into it.
type streamReader struct {
	name   string
	header bool
	out    []string
	chunks chan []byte // closed at the end of r, after err is set
	err    error       // r's error other than io.EOF, once chunks is closed
	stop   chan struct{}
	s      string   // the text not yet cut into lines
	pend   [][]byte // chunks after s without a line end
	eof    bool
	lines  int64
	closed bool
}

// pump reads r into fresh chunks until it ends or the reader is closed.
func (r *streamReader) pump(in io.Reader, size int) {
	defer close(r.chunks)
	for {
		buf := make([]byte, size)
		n, err := in.Read(buf)
		if n > 0 {
			select {
			case r.chunks <- buf[:n]:
			case <-r.stop:
				return
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			r.err = err
			return
		}
	}
}

// Read implements weir.Reader.
func (r *streamReader) Read() ([]string, error) {
	out := r.out[:0]
	wait := time.NewTimer(5 * time.Millisecond)
	defer wait.Stop()
	for len(out) < cap(out) {
		k := strings.IndexByte(r.s, '\n')
		var line string
		switch {
		case k >= 0:
			line, r.s = r.s[:k], r.s[k+1:]
		case r.eof && r.s != "":
			line, r.s = r.s, ""
		case r.eof:
			if len(out) == 0 {
				if r.err != nil {
					return nil, fmt.Errorf("file: %s: %w", r.name, r.err)
				}
				return nil, io.EOF
			}
			return out, nil
		default:
			if len(out) > 0 {
				return out, nil // what is at hand, without waiting
			}
			select {
			case c, ok := <-r.chunks:
				r.eof = !ok
				r.append(c)
			case <-wait.C:
				return out, nil // nothing yet
			}
			continue
		}
		r.lines++
		line = strings.TrimSuffix(line, "\r")
		if line == "" || r.header && r.lines == 1 {
			continue
		}
		out = append(out, line)
	}
	return out, nil
}

// append adds chunk c (nil at the end of r) after the text not yet cut.
// Chunks without a line end wait in pend, so that a long line is copied
// once, when it is complete.
func (r *streamReader) append(c []byte) {
	if c != nil && bytes.IndexByte(c, '\n') < 0 {
		r.pend = append(r.pend, c)
		return
	}
	if len(r.pend) == 0 && (r.s == "" || c == nil) {
		if len(c) > 0 {
			r.s = unsafe.String(&c[0], len(c))
		}
		return
	}
	n := len(r.s) + len(c)
	for _, p := range r.pend {
		n += len(p)
	}
	b := append(make([]byte, 0, n), r.s...)
	for _, p := range r.pend {
		b = append(b, p...)
	}
	b = append(b, c...)
	r.s, r.pend = unsafe.String(&b[0], len(b)), nil
}

// Close implements weir.Reader.
func (r *streamReader) Close() error {
	if !r.closed {
		r.closed = true
		close(r.stop)
	}
	r.s, r.out = "", nil
	return nil
}
