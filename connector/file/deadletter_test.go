package file

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weirstream/weir"
)

// scanLetters finds the letters a source over paths must write by a plain
// scan of the files: each line, numbered from 1 with its byte offset,
// without its terminator, that is not empty nor a skipped header and that
// decode rejects.
func scanLetters(t *testing.T, source string, paths []string, header bool, decode func(string) error) []Letter {
	t.Helper()
	var want []Letter
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		off := 0
		for n := 1; off < len(data); n++ {
			line, _, _ := strings.Cut(string(data[off:]), "\n")
			next := off + len(line) + 1
			line = strings.TrimSuffix(line, "\r")
			if line != "" && !(header && n == 1) {
				if err := decode(line); err != nil {
					want = append(want, Letter{Source: source, File: p, Line: int64(n), Offset: int64(off), Reason: err.Error(), Record: line})
				}
			}
			off = next
		}
	}
	return want
}

// sortLetters sorts letters by file and offset.
func sortLetters(ls []Letter) []Letter {
	slices.SortFunc(ls, func(a, b Letter) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return int(a.Offset - b.Offset)
	})
	return ls
}

func diffLetters(t *testing.T, what string, got, want []Letter) {
	t.Helper()
	got, want = sortLetters(slices.Clone(got)), sortLetters(slices.Clone(want))
	if slices.Equal(got, want) {
		return
	}
	t.Errorf("%s: %d letters, want %d", what, len(got), len(want))
	for i := range max(len(got), len(want)) {
		var g, w Letter
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("%s: letter %d is\n%+v\nwant\n%+v", what, i, g, w)
			return
		}
	}
}

type event struct {
	User string `json:"user"`
	N    int    `json:"n"`
}

func decodeEvent(line string) (event, error) {
	var e event
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		return e, err
	}
	if e.User == "" {
		return e, errors.New(`missing field "user"`)
	}
	return e, nil
}

func csvRow(f []string) (int, error) {
	if len(f) != 2 {
		return 0, fmt.Errorf("%d fields, want 2", len(f))
	}
	return strconv.Atoi(f[1])
}

// Letters name the file, line and offset of each rejected line, with the
// decoder's reason and the line unchanged, for JSON lines, CSV and text,
// whatever the parallelism and chunk size.
func TestDeadLetterPositions(t *testing.T) {
	dir := t.TempDir()
	var jsonText, csvText, text strings.Builder
	for i := range 400 {
		switch {
		case i%23 == 5:
			fmt.Fprintf(&jsonText, "{\"user\":\"u%d\",\"n\":%d\n", i, i) // cut short
		case i%29 == 7:
			fmt.Fprintf(&jsonText, "{\"n\":%d}\r\n", i) // no user, CRLF
		case i%31 == 2:
			jsonText.WriteString("\n")
		default:
			fmt.Fprintf(&jsonText, "{\"user\":\"u%d\",\"n\":%d}\n", i, i)
		}
		switch {
		case i%17 == 3:
			fmt.Fprintf(&csvText, "u%d,\"%d\n", i, i) // unclosed quote
		case i%19 == 4:
			fmt.Fprintf(&csvText, "u%d,%d,extra\n", i, i)
		case i%13 == 1:
			fmt.Fprintf(&csvText, "u%d,x%d\n", i, i)
		default:
			fmt.Fprintf(&csvText, "u%d,%d\n", i, i)
		}
		fmt.Fprintf(&text, "line %d %s\n", i, strings.Repeat("z", i%41))
	}
	write := func(name, s string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jsonPaths := []string{write("a.jsonl", jsonText.String()), write("b.jsonl", strings.TrimSuffix(jsonText.String(), "\n"))}
	csvPaths := []string{write("a.csv", "user,n\n"+csvText.String()), write("b.csv", "user,n\r\n"+csvText.String())}
	textPaths := []string{write("a.txt", text.String())}
	badText := func(l string) error {
		if strings.Count(l, "z")%7 == 3 {
			return fmt.Errorf("%d z", strings.Count(l, "z"))
		}
		return nil
	}
	csvDecode := CSV(csvPaths, csvRow, Options{}).(*source[int]).newDecoder()
	cases := []struct {
		name   string
		paths  []string
		header bool
		decode func(string) error
		src    func(Options) weir.Input[int]
	}{
		{"json", jsonPaths, false, func(l string) error { _, err := decodeEvent(l); return err }, func(o Options) weir.Input[int] {
			return JSONLines(jsonPaths, func(l string) (int, error) { e, err := decodeEvent(l); return e.N, err }, o)
		}},
		{"csv", csvPaths, true, func(l string) error { _, err := csvDecode(l); return err }, func(o Options) weir.Input[int] {
			return CSV(csvPaths, csvRow, o)
		}},
		{"text", textPaths, false, badText, func(o Options) weir.Input[int] {
			return JSONLines(textPaths, func(l string) (int, error) { return len(l), badText(l) }, o)
		}},
	}
	for _, c := range cases {
		want := scanLetters(t, "", c.paths, c.header, c.decode)
		if len(want) < 10 {
			t.Fatalf("%s: only %d bad lines", c.name, len(want))
		}
		for _, par := range []int{1, 2, 3, 5} {
			for _, chunk := range []int{16, 100, 0} {
				var out strings.Builder
				dl := NewDeadLetter(&out)
				if _, err := readAll(t, c.src(Options{DeadLetter: dl, Header: c.header, chunkSize: chunk, BatchSize: 7}), par); err != nil {
					t.Fatal(err)
				}
				got, err := ParseDeadLetters([]byte(out.String()))
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("%s, %d readers, chunk %d", c.name, par, chunk)
				diffLetters(t, what, got, want)
				if dl.Count() != int64(len(want)) {
					t.Errorf("%s: Count = %d, want %d", what, dl.Count(), len(want))
				}
			}
		}
	}
}

// A record that is not valid UTF-8 comes back byte for byte (as
// record_b64); other records are JSON strings, HTML characters unescaped.
func TestDeadLetterBytesRoundTrip(t *testing.T) {
	records := []string{"\xff\xfe\x00bad\x80", "<a href=\"x\">&amp;</a>\t\\ \u2028 é", "\x7f\x01", "ok\xc3"}
	var out strings.Builder
	dl := NewDeadLetter(&out)
	for i, r := range records {
		if err := dl.Add(Letter{Source: "s", File: "f\xff", Line: int64(i + 1), Offset: int64(10 * i), Reason: "r", Record: r}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ParseDeadLetters([]byte(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for i, r := range records {
		if got[i].Record != r {
			t.Errorf("record %q came back as %q", r, got[i].Record)
		}
		if got[i].File != "f\uFFFD" || keyOf(got[i]) != keyOf(Letter{Source: "s", File: "f\xff", Offset: int64(10 * i)}) {
			t.Errorf("file %q came back as %q, key %+v", "f\xff", got[i].File, keyOf(got[i]))
		}
		if b64 := strings.Contains(lines[i], `"record_b64":`); b64 == utf8.ValidString(r) {
			t.Errorf("line %q: record_b64 %v for record %q", lines[i], b64, r)
		}
	}
	if !strings.Contains(lines[1], `"record":"<a href=\"x\">&amp;</a>`) {
		t.Errorf("line %q escapes HTML", lines[1])
	}
	// Every byte value, in every position, survives a file source.
	dir := t.TempDir()
	var data []byte
	var want []string
	for b := range 256 {
		if b == '\n' || b == '\r' || 255-b == '\n' || 255-b == '\r' {
			continue
		}
		line := string([]byte{byte(b), byte(255 - b), '-', byte(b)})
		want, data = append(want, line), append(append(data, line...), '\n')
	}
	p := dir + "/bytes"
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	dl, err = OpenDeadLetter(dir + "/dead")
	if err != nil {
		t.Fatal(err)
	}
	src := JSONLines([]string{p}, func(string) (int, error) { return 0, errors.New("no") }, Options{DeadLetter: dl})
	if _, err := readAll(t, src, 3); err != nil {
		t.Fatal(err)
	}
	letters, err := ReadDeadLetters(dir + "/dead")
	if err != nil {
		t.Fatal(err)
	}
	var recs []string
	for _, l := range letters {
		recs = append(recs, l.Record)
	}
	if !slices.Equal(recs, want) {
		t.Errorf("records came back as %q, want %q", recs, want)
	}
}
