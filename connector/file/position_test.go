package file

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weirstream/weir"
)

// seekable opens instance ctx of src as a weir.Seekable reader.
func seekable(t testing.TB, src weir.Input[string], ctx weir.SourceContext) (weir.Reader[string], weir.Seekable) {
	t.Helper()
	r, err := src.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return r, r.(weir.Seekable)
}

// readRest reads r to the end or the first error.
func readRest(r weir.Reader[string]) ([]string, error) {
	var out []string
	for {
		b, err := r.Read()
		out = append(out, b...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// randomFiles returns 1 to 4 files of random lines, with empty lines,
// CRLF, no final newline and long lines mixed in.
func randomFiles(rng *rand.Rand) []testFile {
	var files []testFile
	for k := range 1 + rng.IntN(4) {
		f := genFile(string(rune('a'+k)), rng.IntN(50), []int{0, 0, 90}[rng.IntN(3)])
		f.crlf, f.noFinal = rng.IntN(3) == 0, rng.IntN(3) == 0
		if rng.IntN(8) == 0 {
			f.lines = nil // an empty file
		}
		files = append(files, f)
	}
	return files
}

// bad tells the lines a dead-lettering decoder rejects: those numbered
// 4 mod 10 by genFile.
func bad(l string) bool {
	_, rest, _ := strings.Cut(l, ":")
	n, _ := strconv.Atoi(rest[:max(strings.IndexByte(rest, ':'), 0)])
	return n%10 == 4
}

// seekSource is one of the sources of the trials: JSON lines or CSV, with
// or without a header and dead letters.
func seekSource(paths []string, csv, header, dead bool, batch, chunk int) weir.Input[string] {
	opts := Options{Header: header, BatchSize: batch, chunkSize: chunk}
	if dead {
		opts.DeadLetter = NewDeadLetter(io.Discard)
	}
	reject := func(l string) error {
		if dead && bad(l) {
			return errors.New("bad")
		}
		return nil
	}
	if csv {
		return CSV(paths, func(f []string) (string, error) {
			l := strings.Join(f, ",")
			return l, reject(l)
		}, opts)
	}
	return JSONLines(paths, func(l string) (string, error) { return l, reject(l) }, opts)
}

func TestSeekFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 300 {
		files := randomFiles(rng)
		paths := writeFiles(t, files)
		csv, header, dead := rng.IntN(2) == 0, rng.IntN(3) == 0, rng.IntN(3) == 0
		batch, chunk := 1+rng.IntN(12), []int{1, 7, 64, 0}[rng.IntN(4)]
		src := seekSource(paths, csv, header, dead, batch, chunk)
		par := 1 + rng.IntN(6)
		// The naive model: the lines kept, in order, split among the
		// instances.
		var model []string
		for _, l := range wantLines(files, header) {
			if !dead || !bad(l) {
				model = append(model, l)
			}
		}
		shares, err := readAll(t, src, par)
		if err != nil {
			t.Fatal(err)
		}
		if all := slices.Concat(shares...); !slices.Equal(all, model) {
			t.Fatalf("trial %d: read %q, want %q", trial, all, model)
		}
		for range 4 {
			ctx := weir.SourceContext{Instance: rng.IntN(par), Parallelism: par}
			reads := rng.IntN(len(shares[ctx.Instance])/batch+3) - 1
			name := fmt.Sprintf("trial %d (%d of %d, csv %v, header %v, dead %v, batch %d, chunk %d, %d reads)",
				trial, ctx.Instance, par, csv, header, dead, batch, chunk, reads)
			seekTrial(t, rng, name, src, ctx, reads, shares[ctx.Instance])
		}
	}
}

// seekTrial reads some batches of instance ctx of src (reads < 0: to the
// end), takes the position after a random prefix of the last one, reads
// on to the end, which must give want, and checks that a new reader
// sought to the position reads the rest of want.
func seekTrial(t *testing.T, rng *rand.Rand, name string, src weir.Input[string], ctx weir.SourceContext, reads int, want []string) {
	t.Helper()
	r, s := seekable(t, src, ctx)
	defer r.Close()
	var before, last []string
	for k := 0; reads < 0 || k < reads; k++ {
		before = append(before, last...)
		var err error
		if last, err = r.Read(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	used := 0
	if len(last) > 0 {
		used = rng.IntN(len(last) + 1)
	}
	pos, err := s.Position(used)
	if err != nil {
		t.Fatalf("%s: Position(%d): %v", name, used, err)
	}
	before = append(before, last[:used]...)
	a := append(slices.Clone(before), last[used:]...)
	rest, err := readRest(r)
	if a = append(a, rest...); err != nil || !slices.Equal(a, want) {
		t.Fatalf("%s: read %q, %v; want %q", name, a, err, want)
	}
	r2, s2 := seekable(t, src, ctx)
	defer r2.Close()
	if err := s2.Seek(pos); err != nil {
		t.Fatalf("%s: Seek(%x): %v", name, pos, err)
	}
	if again, err := s2.Position(0); err != nil || !bytes.Equal(again, pos) {
		t.Fatalf("%s: Position(0) right after Seek = %x, %v; want %x", name, again, err, pos)
	}
	rest, err = readRest(r2)
	if b := append(before, rest...); err != nil || !slices.Equal(b, a) {
		t.Fatalf("%s: used %d of %d: after Seek read %q, %v; want %q", name, used, len(last), b, err, a)
	}
}

func TestSeekErrorLineNumbers(t *testing.T) {
	// After Seek, an error names the same line as without.
	files := []testFile{
		genFile("a", 50, 0),
		func() testFile { f := genFile("b", 40, 90); f.crlf = true; return f }(),
	}
	paths := writeFiles(t, files)
	rng := rand.New(rand.NewPCG(7, 8))
	for k, f := range files {
		for line := 2; line <= len(f.lines); line += 3 {
			if f.lines[line-1] == "" {
				continue
			}
			n := 1 + rng.IntN(4)
			src := JSONLines(paths, failOn(f.name, line), Options{BatchSize: 1 + rng.IntN(4), chunkSize: 16, Header: line%2 == 0})
			want := fmt.Sprintf("file: %s:%d: boom", paths[k], line)
			for i := range n {
				ctx := weir.SourceContext{Instance: i, Parallelism: n}
				r, s := seekable(t, src, ctx)
				start, _ := s.Position(0)
				positions := [][]byte{start}
				var err error
				for err == nil {
					var b []string
					b, err = r.Read()
					if p, perr := s.Position(rng.IntN(len(b) + 1)); perr == nil {
						positions = append(positions, p)
					}
				}
				r.Close()
				if err == io.EOF {
					continue
				}
				if err.Error() != want {
					t.Fatalf("%s line %d, %d of %d: %v; want %q", f.name, line, i, n, err, want)
				}
				r2, s2 := seekable(t, src, ctx)
				if err := s2.Seek(positions[rng.IntN(len(positions))]); err != nil {
					t.Fatal(err)
				}
				if _, err := readRest(r2); err == nil || err.Error() != want {
					t.Errorf("%s line %d, %d of %d, after Seek: %v; want %q", f.name, line, i, n, err, want)
				}
				r2.Close()
			}
		}
	}
}

func TestSeekBadPositions(t *testing.T) {
	files := []testFile{genFile("a", 10, 0), genFile("b", 60, 0)}
	paths := writeFiles(t, files)
	src := Lines(paths, Options{BatchSize: 4})
	ctx := weir.SourceContext{Instance: 1, Parallelism: 2}
	r, s := seekable(t, src, ctx)
	if _, err := s.Position(1); err == nil {
		t.Errorf("Position(1) before any Read: nil error")
	}
	r.Read()
	good, _ := s.Position(2)
	r.Close()
	// The fields of good, to build others from.
	d := posDecoder{B: good[1:]}
	inst, par, nfiles, fp, nread := d.Uvarint(), d.Uvarint(), d.Uvarint(), d.Uint64(), d.Uvarint()
	var read []uint64
	for range 2 * nread {
		read = append(read, d.Uvarint())
	}
	seg, _ := d.Uvarint(), d.Byte()
	start, lines, off := d.Uvarint(), d.Uvarint(), d.Uvarint()
	if d.Err != nil || len(d.B) != 0 || nread != 1 || read[0] != 1 || seg != 0 {
		t.Fatalf("position %x: %v, %d bytes left, files read %v, segment %d", good, d.Err, len(d.B), read, seg)
	}
	at := func(seg uint64, begun byte, vals ...uint64) []byte {
		b := []byte{posFormat}
		for _, v := range []uint64{inst, par, nfiles} {
			b = binary.AppendUvarint(b, v)
		}
		b = binary.LittleEndian.AppendUint64(b, fp)
		b = binary.AppendUvarint(b, nread)
		for _, v := range append(slices.Clone(read), seg) {
			b = binary.AppendUvarint(b, v)
		}
		b = append(b, begun)
		for _, v := range vals {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	if !bytes.Equal(at(seg, 1, start, lines, off), good) {
		t.Fatalf("rebuilt %x, want %x", at(seg, 1, start, lines, off), good)
	}
	size := uint64(len(files[1].content()))
	tests := []struct {
		name, want string
		pos        []byte
	}{
		{"empty", "file: empty position", nil},
		{"format", "file: position format 7, want 1", append([]byte{7}, good[1:]...)},
		{"truncated", "file: position of", good[:len(good)-1]},
		{"cut short", "truncated or corrupt", good[:9]},
		{"trailing", "file: position has 2 bytes too many", append(slices.Clone(good), 0, 0)},
		{"instance", "file: position of instance 0 of 2, on the reader of instance 1 of 2", append([]byte{1, 0}, good[2:]...)},
		{"file count", "file: position taken on 3 files, the source has 2", append([]byte{1, 1, 2, 3}, good[4:]...)},
		{"segment", "corrupt: 2 where at most 1 fits", at(2, 0)},
		{"state", "corrupt state 2 in segment 0 of 1", at(0, 2)},
		{"done and begun", "corrupt state 1 in segment 1 of 1", at(1, 1, 0, 0, 0)},
		{"beyond the file", "outside the segment", at(0, 1, start, lines, size+1)},
		{"before the segment", "outside the segment", at(0, 1, 0, lines, off)},
		{"lines", "position of 1 lines between offsets", at(0, 1, start, 1, start)},
		{"too many lines", "lines between offsets", at(0, 1, start, off, off)},
		{"mid-line", "not the start of a line", at(0, 1, start, lines, off+1)},
	}
	for _, tt := range tests {
		_, s := seekable(t, src, ctx)
		if err := s.Seek(tt.pos); err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "file: ") {
			t.Errorf("%s: Seek(%x) = %v; want an error with %q", tt.name, tt.pos, err, tt.want)
		}
	}
	// The end of the file is a place to resume from.
	if _, s := seekable(t, src, ctx); s.Seek(at(0, 1, start, lines+1, size)) != nil {
		t.Errorf("Seek to the end of the file refused")
	}

	// A file that changed size is named.
	if err := os.WriteFile(paths[1], []byte(files[1].content()+"b:61:x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, s = seekable(t, src, ctx)
	want := fmt.Sprintf("file: %s has %d bytes, %d when the position was taken", paths[1], size+7, size)
	if err := s.Seek(good); err == nil || err.Error() != want {
		t.Errorf("Seek after a file grew: %v; want %q", err, want)
	}
	// So is, without its name, a change to a file the reader does not read.
	os.WriteFile(paths[1], []byte(files[1].content()), 0o644)
	os.WriteFile(paths[0], []byte(files[0].content()+"a:11:x\n"), 0o644)
	_, s = seekable(t, src, weir.SourceContext{Instance: 1, Parallelism: 2})
	if err := s.Seek(good); err == nil || !strings.Contains(err.Error(), "the files differ") {
		t.Errorf("Seek after another file grew: %v", err)
	}
	// A position on a closed reader is refused.
	r, s = seekable(t, src, ctx)
	r.Close()
	if err := s.Seek(good); err == nil {
		t.Errorf("Seek on a closed reader: nil error")
	}
}

func FuzzSeekFile(f *testing.F) {
	files := []testFile{genFile("a", 30, 0), func() testFile { f := genFile("b", 20, 40); f.crlf = true; return f }()}
	paths := writeFiles(f, files)
	total := len(wantLines(files, false))
	ctx := weir.SourceContext{Instance: 1, Parallelism: 3}
	src := Lines(paths, Options{BatchSize: 5, Header: true, chunkSize: 16})
	for i := range 3 {
		r, s := seekable(f, src, weir.SourceContext{Instance: i, Parallelism: 3})
		for {
			b, err := r.Read()
			for used := range len(b) + 1 {
				if p, err := s.Position(used); err == nil {
					f.Add(p)
				}
			}
			if err != nil {
				break
			}
		}
		r.Close()
	}
	f.Fuzz(func(t *testing.T, pos []byte) {
		r, s := seekable(t, src, ctx)
		defer r.Close()
		if err := s.Seek(pos); err != nil {
			if !strings.HasPrefix(err.Error(), "file: ") {
				t.Fatalf("error without the package prefix: %v", err)
			}
			return
		}
		if got, _ := readRest(r); len(got) > total {
			t.Fatalf("read %d lines after Seek(%x); there are %d", len(got), pos, total)
		}
	})
}
