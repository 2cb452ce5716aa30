package file

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weirstream/weir"
)

// testFile is the content of a file, given as lines; each non-empty line
// is "name:number:padding", so that a record tells where it came from.
type testFile struct {
	name    string
	lines   []string // the content of each line, "" for an empty line
	crlf    bool     // end lines with "\r\n"
	noFinal bool     // no terminator after the last line
}

func (f testFile) content() string {
	var b strings.Builder
	for i, l := range f.lines {
		b.WriteString(l)
		if i < len(f.lines)-1 || !f.noFinal {
			if f.crlf {
				b.WriteString("\r\n")
			} else {
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// genFile returns a file of n lines of varied lengths, every seventh empty.
func genFile(name string, n int, long int) testFile {
	f := testFile{name: name}
	for i := 1; i <= n; i++ {
		if i%7 == 3 {
			f.lines = append(f.lines, "")
			continue
		}
		pad := strings.Repeat("x", (i*37)%23)
		if long > 0 && i%5 == 0 {
			pad = strings.Repeat("y", long)
		}
		f.lines = append(f.lines, fmt.Sprintf("%s:%d:%s", name, i, pad))
	}
	return f
}

func writeFiles(t testing.TB, files []testFile) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(f.content()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// wantLines returns the non-empty lines of the files in order.
func wantLines(files []testFile, header bool) []string {
	var want []string
	for _, f := range files {
		for i, l := range f.lines {
			if l != "" && !(header && i == 0) {
				want = append(want, l)
			}
		}
	}
	return want
}

// readAll reads every instance of src in turn and returns what each read.
func readAll[T any](t *testing.T, src weir.Input[T], n int) ([][]T, error) {
	t.Helper()
	out := make([][]T, n)
	for i := range n {
		r, err := src.Open(weir.SourceContext{Instance: i, Parallelism: n})
		if err != nil {
			return nil, err
		}
		for {
			b, err := r.Read()
			if err == io.EOF {
				if len(b) != 0 {
					t.Fatalf("instance %d: %d records with io.EOF", i, len(b))
				}
				break
			}
			if err != nil {
				r.Close()
				return out, err
			}
			if len(b) == 0 {
				t.Fatalf("instance %d: empty batch without error", i)
			}
			out[i] = append(out[i], b...)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out, nil
}

func identity(line string) (string, error) { return line, nil }

var fileSets = []struct {
	name  string
	files []testFile
}{
	{"one small file", []testFile{genFile("a", 40, 0)}},
	{"one line", []testFile{{name: "a", lines: []string{"a:1:only"}}}},
	{"one line without newline", []testFile{{name: "a", lines: []string{"a:1:only"}, noFinal: true}}},
	{"empty and blank files", []testFile{{name: "e"}, genFile("a", 10, 0), {name: "b", lines: []string{"", "", ""}}, genFile("c", 5, 0)}},
	{"several sizes", []testFile{genFile("a", 3, 0), genFile("b", 200, 0), genFile("c", 1, 0), genFile("d", 57, 0)}},
	{"crlf and no final newline", []testFile{
		func() testFile { f := genFile("a", 30, 0); f.crlf = true; return f }(),
		func() testFile { f := genFile("b", 31, 0); f.noFinal = true; return f }(),
		func() testFile { f := genFile("c", 32, 0); f.crlf, f.noFinal = true, true; return f }(),
	}},
	{"long lines", []testFile{genFile("a", 60, 300), genFile("b", 20, 1000)}},
	{"leading empty lines", []testFile{{name: "a", lines: []string{"", "", "a:3:x", "", "a:5:y", ""}}}},
}

func TestEveryLineOnce(t *testing.T) {
	for _, fs := range fileSets {
		paths := writeFiles(t, fs.files)
		want := wantLines(fs.files, false)
		for _, chunk := range []int{1, 7, 64, 1000, 0} {
			for n := 1; n <= 8; n++ {
				name := fmt.Sprintf("%s/chunk=%d/n=%d", fs.name, chunk, n)
				src := JSONLines(paths, identity, Options{BatchSize: 5, chunkSize: chunk})
				got, err := readAll(t, src, n)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				// The shares are contiguous, so the instances read the
				// lines in order.
				if all := slices.Concat(got...); !slices.Equal(all, want) {
					t.Fatalf("%s: read %d lines\n%q\nwant %d\n%q", name, len(all), all, len(want), want)
				}
			}
		}
	}
}

func TestSharesAreBalanced(t *testing.T) {
	files := []testFile{genFile("a", 1000, 0)}
	paths := writeFiles(t, files)
	got, err := readAll(t, JSONLines(paths, identity, Options{}), 2)
	if err != nil {
		t.Fatal(err)
	}
	a, b := len(got[0]), len(got[1])
	if a == 0 || b == 0 || a > 2*b || b > 2*a {
		t.Errorf("two instances over one file read %d and %d lines", a, b)
	}
}

// failOn returns a decoder that rejects the line numbered line of the file
// named name (by the numbering of genFile).
func failOn(name string, line int) func(string) (string, error) {
	prefix := name + ":" + strconv.Itoa(line) + ":"
	return func(l string) (string, error) {
		if strings.HasPrefix(l, prefix) {
			return "", errors.New("boom")
		}
		return l, nil
	}
}

func TestErrorLineNumbers(t *testing.T) {
	files := []testFile{
		genFile("a", 50, 0),
		func() testFile { f := genFile("b", 40, 90); f.crlf = true; return f }(),
		func() testFile { f := genFile("c", 30, 0); f.noFinal = true; return f }(),
	}
	paths := writeFiles(t, files)
	for k, f := range files {
		for line := 1; line <= len(f.lines); line++ {
			if f.lines[line-1] == "" {
				continue
			}
			for _, chunk := range []int{16, 0} {
				for n := 1; n <= 8; n++ {
					src := JSONLines(paths, failOn(f.name, line), Options{chunkSize: chunk})
					_, err := readAll(t, src, n)
					want := fmt.Sprintf("file: %s:%d: boom", paths[k], line)
					if err == nil || err.Error() != want {
						t.Fatalf("%s line %d, chunk %d, n=%d: error %v, want %q", f.name, line, chunk, n, err, want)
					}
				}
			}
		}
	}
}

func TestErrorLineNumberWithHeaderAndEmptyLines(t *testing.T) {
	files := []testFile{{name: "h.csv", lines: []string{"id,name", "", "1,a", "", "", "2", "3,c"}}}
	paths := writeFiles(t, files)
	src := CSV(paths, func(f []string) ([]string, error) {
		if len(f) != 2 {
			return nil, fmt.Errorf("%d fields, want 2", len(f))
		}
		return f, nil
	}, Options{Header: true})
	_, err := readAll(t, src, 1)
	if want := fmt.Sprintf("file: %s:6: 1 fields, want 2", paths[0]); err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

func TestErrorStopsTheReader(t *testing.T) {
	paths := writeFiles(t, []testFile{genFile("a", 10, 0)})
	r, err := JSONLines(paths, failOn("a", 2), Options{}).Open(weir.SourceContext{Instance: 0, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for range 2 {
		if b, err := r.Read(); err == nil || err == io.EOF || len(b) != 0 {
			t.Fatalf("Read = %d records, %v; want the decoder's error", len(b), err)
		}
	}
}

func TestDeadLetter(t *testing.T) {
	files := []testFile{genFile("a", 100, 0), func() testFile { f := genFile("b", 80, 0); f.crlf = true; return f }()}
	paths := writeFiles(t, files)
	bad := func(l string) bool {
		_, rest, _ := strings.Cut(l, ":")
		n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ':')])
		return n%10 == 4
	}
	all := wantLines(files, false)
	var wantGood, wantBad []string
	for _, l := range all {
		if bad(l) {
			wantBad = append(wantBad, l)
		} else {
			wantGood = append(wantGood, l)
		}
	}
	for n := 1; n <= 4; n++ {
		var buf strings.Builder
		dl := NewDeadLetter(&buf)
		src := JSONLines(paths, func(l string) (string, error) {
			if bad(l) {
				return "", errors.New("bad")
			}
			return l, nil
		}, Options{DeadLetter: dl, chunkSize: 32})
		got, err := readAll(t, src, n)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if g := slices.Concat(got...); !slices.Equal(g, wantGood) {
			t.Errorf("n=%d: read %q, want %q", n, g, wantGood)
		}
		if dl.Count() != int64(len(wantBad)) {
			t.Errorf("n=%d: Count = %d, want %d", n, dl.Count(), len(wantBad))
		}
		letters, err := ParseDeadLetters([]byte(buf.String()))
		if err != nil {
			t.Fatal(err)
		}
		var records []string
		for _, l := range letters {
			records = append(records, l.Record)
		}
		if !slices.Equal(records, wantBad) {
			t.Errorf("n=%d: dead letters %q, want %q", n, records, wantBad)
		}
		diffLetters(t, fmt.Sprintf("n=%d", n), letters, scanLetters(t, "", paths, false, func(l string) error {
			if bad(l) {
				return errors.New("bad")
			}
			return nil
		}))
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestDeadLetterWriteError(t *testing.T) {
	paths := writeFiles(t, []testFile{genFile("a", 10, 0)})
	src := JSONLines(paths, failOn("a", 2), Options{DeadLetter: NewDeadLetter(failWriter{})})
	if _, err := readAll(t, src, 1); err == nil || !strings.Contains(err.Error(), "file: dead letter: disk full") {
		t.Fatalf("error %v, want the dead letter's", err)
	}
}

func TestHeader(t *testing.T) {
	files := []testFile{
		{name: "a.csv", lines: []string{"id,name", "1,a", "2,b", "3,c"}},
		{name: "b.csv", lines: []string{"id,name"}},
		{name: "c.csv", lines: []string{"id,name", "4,d"}, crlf: true, noFinal: true},
		{name: "d.csv"},
	}
	paths := writeFiles(t, files)
	want := [][]string{{"1", "a"}, {"2", "b"}, {"3", "c"}, {"4", "d"}}
	for _, chunk := range []int{5, 0} {
		for n := 1; n <= 8; n++ {
			src := CSV(paths, func(f []string) ([]string, error) { return slices.Clone(f), nil }, Options{Header: true, chunkSize: chunk})
			got, err := readAll(t, src, n)
			if err != nil {
				t.Fatal(err)
			}
			if all := slices.Concat(got...); !slices.EqualFunc(all, want, slices.Equal) {
				t.Errorf("chunk %d, n=%d: read %q, want %q", chunk, n, all, want)
			}
		}
	}
	// JSON lines can have a header line too.
	got, err := readAll(t, JSONLines(paths[:1], identity, Options{Header: true}), 3)
	if err != nil {
		t.Fatal(err)
	}
	if all := slices.Concat(got...); !slices.Equal(all, []string{"1,a", "2,b", "3,c"}) {
		t.Errorf("JSONLines with header read %q", all)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "events.jsonl")
	_, err := JSONLines([]string{missing}, identity, Options{}).Open(weir.SourceContext{Instance: 0, Parallelism: 1})
	if want := "file: open " + missing + ": no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("Open = %v, want %q", err, want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open error %v is not fs.ErrNotExist", err)
	}
	if _, err := JSONLines([]string{dir}, identity, Options{}).Open(weir.SourceContext{Instance: 0, Parallelism: 1}); err == nil {
		t.Error("Open of a directory succeeded")
	}
	if _, err := JSONLines(nil, identity, Options{}).Open(weir.SourceContext{Instance: 1, Parallelism: 1}); err == nil {
		t.Error("Open of instance 1 of 1 succeeded")
	}
}

func TestNoFiles(t *testing.T) {
	got, err := readAll(t, JSONLines(nil, identity, Options{}), 3)
	if err != nil || len(slices.Concat(got...)) != 0 {
		t.Fatalf("read %q, %v from no files", got, err)
	}
}

func TestSegments(t *testing.T) {
	tests := []struct {
		sizes []int64
		n     int
		want  [][]segment
	}{
		{[]int64{10}, 2, [][]segment{{{0, 0, 5}}, {{0, 5, 10}}}},
		{[]int64{4, 0, 6}, 2, [][]segment{{{0, 0, 4}, {2, 0, 1}}, {{2, 1, 6}}}},
		{[]int64{3}, 4, [][]segment{nil, {{0, 0, 1}}, {{0, 1, 2}}, {{0, 2, 3}}}},
	}
	for _, tt := range tests {
		for i := range tt.n {
			if got := segments(tt.sizes, i, tt.n); !slices.Equal(got, tt.want[i]) {
				t.Errorf("segments(%v, %d, %d) = %v, want %v", tt.sizes, i, tt.n, got, tt.want[i])
			}
		}
	}
}

func TestReadAllocs(t *testing.T) {
	f := testFile{name: "a.jsonl"}
	for i := range 80_000 {
		f.lines = append(f.lines, fmt.Sprintf(`{"id":%d,"payload":"%s"}`, i, strings.Repeat("p", 80)))
	}
	paths := writeFiles(t, []testFile{f})
	const batch = 1024
	r, err := JSONLines(paths, identity, Options{BatchSize: batch}).Open(weir.SourceContext{Instance: 0, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	allocs := testing.AllocsPerRun(60, func() {
		if b, err := r.Read(); err != nil || len(b) != batch {
			t.Fatalf("Read = %d records, %v", len(b), err)
		}
	})
	if allocs > 2 {
		t.Errorf("%v allocations per Read of %d records, want at most 2", allocs, batch)
	}
}
