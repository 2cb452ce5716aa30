package file

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/weirstream/weir"
)

// writer is a buffered sink that formats each record with write. It is
// safe for concurrent use; it flushes at the end of each epoch and on
// Close, which may be called once per sink instance. It never closes the
// underlying writer.
type writer[T any] struct {
	mu     sync.Mutex
	bw     *bufio.Writer
	header func(*bufio.Writer) error // written before anything else, if set
	write  func(*bufio.Writer, T) error
	err    error // sticky
}

var _ weir.EpochSink = (*writer[int])(nil)

// Write implements weir.Output.
func (s *writer[T]) Write(batch []T) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(); err != nil {
		return err
	}
	for _, v := range batch {
		if err := s.write(s.bw, v); err != nil {
			s.err = fmt.Errorf("file: %w", err)
			return s.err
		}
	}
	return nil
}

// EndEpoch implements weir.EpochSink: it flushes the buffer.
func (s *writer[T]) EndEpoch(uint64) error { return s.flush() }

// Close implements weir.Output: it flushes the buffer.
func (s *writer[T]) Close() error { return s.flush() }

func (s *writer[T]) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(); err != nil {
		return err
	}
	if err := s.bw.Flush(); err != nil {
		s.err = fmt.Errorf("file: %w", err)
	}
	return s.err
}

// begin writes the header, once. s.mu is held.
func (s *writer[T]) begin() error {
	if s.err == nil && s.header != nil {
		if err := s.header(s.bw); err != nil {
			s.err = fmt.Errorf("file: %w", err)
		}
		s.header = nil
	}
	return s.err
}

// CSVWriter returns a sink that writes a CSV line per record to w, after
// the header line if header is not empty. row appends the fields of a
// record to the slice it is given (empty, reused between records) and
// returns it. Fields with commas, quotes or line breaks are quoted.
func CSVWriter[T any](w io.Writer, header []string, row func(T, []string) []string) weir.Output[T] {
	s := &writer[T]{bw: bufio.NewWriterSize(w, 64<<10)}
	if len(header) > 0 {
		header = append([]string(nil), header...)
		s.header = func(bw *bufio.Writer) error { return writeCSV(bw, header) }
	}
	var fields []string
	s.write = func(bw *bufio.Writer, v T) error {
		fields = row(v, fields[:0])
		return writeCSV(bw, fields)
	}
	return s
}

func writeCSV(bw *bufio.Writer, fields []string) error {
	for i, f := range fields {
		if i > 0 {
			bw.WriteByte(',')
		}
		if !strings.ContainsAny(f, ",\"\r\n") {
			bw.WriteString(f)
			continue
		}
		bw.WriteByte('"')
		for {
			k := strings.IndexByte(f, '"')
			if k < 0 {
				break
			}
			bw.WriteString(f[:k+1])
			bw.WriteByte('"')
			f = f[k+1:]
		}
		bw.WriteString(f)
		bw.WriteByte('"')
	}
	return bw.WriteByte('\n')
}

// JSONLinesWriter returns a sink that writes each record to w as a line of
// JSON, as encoding/json marshals it (without HTML escaping).
func JSONLinesWriter[T any](w io.Writer) weir.Output[T] {
	s := &writer[T]{bw: bufio.NewWriterSize(w, 64<<10)}
	enc := json.NewEncoder(s.bw)
	enc.SetEscapeHTML(false)
	s.write = func(_ *bufio.Writer, v T) error { return enc.Encode(v) }
	return s
}

// Stdout returns a sink that prints each record to the standard output on
// a line of its own, formatted with %+v: a struct with its field names
// (a window's count as {Key:ann Start:0 End:10000 Value:2}), a value with
// a String method by it.
func Stdout[T any]() weir.Output[T] {
	s := &writer[T]{bw: bufio.NewWriterSize(os.Stdout, 64<<10)}
	s.write = func(bw *bufio.Writer, v T) error {
		_, err := fmt.Fprintf(bw, "%+v\n", v)
		return err
	}
	return s
}
