package file

import (
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// LinesFrom over a pipe written in small pieces, with pauses: the lines
// come out whole, in order, without line ends or empty lines, and a Read
// while the writer pauses returns at once with nothing.
func TestLinesFromPipe(t *testing.T) {
	long := strings.Repeat("x", 100) // spans many 16-byte chunks
	text := "one\r\n\ntwo three\n" + long + "\n\r\n" + "last, no newline"
	want := []string{"one", "two three", long, "last, no newline"}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	go func() {
		for i := 0; i < len(text); i += 7 {
			pw.WriteString(text[i:min(i+7, len(text))])
			if i == 14 {
				time.Sleep(50 * time.Millisecond)
			}
		}
		pw.Close()
	}()
	in := &streamSource{name: "pipe", r: pr, opts: Options{BatchSize: 2, chunkSize: 16}}
	rd, err := in.Open(weir.SourceContext{Instance: 0, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var got []string
	empty := 0
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		t0 := time.Now()
		b, err := rd.Read()
		if took := time.Since(t0); took > time.Second {
			t.Errorf("Read took %v", took)
		}
		if len(b) > 2 {
			t.Errorf("a batch of %d lines; BatchSize is 2", len(b))
		}
		got = append(got, b...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			empty++
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("lines %q; want %q", got, want)
	}
	if empty == 0 {
		t.Error("no Read returned empty while the writer paused")
	}

	// The other instances read nothing, and the input opens once.
	other, err := in.Open(weir.SourceContext{Instance: 1, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := other.Read(); len(b) != 0 || err != io.EOF {
		t.Errorf("instance 1 read %q, %v; want nothing and io.EOF", b, err)
	}
	if _, err := in.Open(weir.SourceContext{Instance: 0, Parallelism: 1}); err == nil || !strings.Contains(err.Error(), "pipe can be read only once") {
		t.Errorf("second Open: %v; want an error", err)
	}
}
