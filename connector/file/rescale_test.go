package file

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir"
)

// splitRun opens the par readers of src, resumes them from positions with
// SeekSplits unless positions is nil, and reads on each a random number of
// batches (none, some, or to the end). It returns the lines each read
// before the position it then took after a random prefix of its last
// batch, and the positions.
func splitRun(t testing.TB, rng *rand.Rand, src weir.Input[string], par, perReader int, positions [][]byte) ([][]string, [][]byte) {
	t.Helper()
	read, cuts := make([][]string, par), make([][]byte, par)
	for i := range par {
		r, s := seekable(t, src, weir.SourceContext{Instance: i, Parallelism: par})
		if positions != nil {
			if err := r.(weir.Rescalable).SeekSplits(positions); err != nil {
				t.Fatalf("SeekSplits on %d of %d: %v", i, par, err)
			}
		}
		reads := rng.IntN(perReader+3) - 1
		var last []string
		for k := 0; reads < 0 || k < reads; k++ {
			read[i] = append(read[i], last...)
			b, err := r.Read()
			if last = slices.Clone(b); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("Read on %d of %d: %v", i, par, err)
			}
		}
		used := 0
		if len(last) > 0 {
			used = rng.IntN(len(last) + 1)
		}
		read[i] = append(read[i], last[:used]...)
		var err error
		if cuts[i], err = s.Position(used); err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	return read, cuts
}

func TestSeekSplitsFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 400 {
		files := randomFiles(rng)
		paths := writeFiles(t, files)
		csv, header, dead := rng.IntN(2) == 0, rng.IntN(3) == 0, rng.IntN(3) == 0
		batch, chunk := 1+rng.IntN(12), []int{1, 7, 64, 0}[rng.IntN(4)]
		src := seekSource(paths, csv, header, dead, batch, chunk)
		// The naive model: the lines kept, in order; they differ.
		index := make(map[string]int)
		for _, l := range wantLines(files, header) {
			if !dead || !bad(l) {
				index[l] = len(index)
			}
		}
		// Up to three runs with random parallelisms, each stopped at random
		// cuts, then a last one that reads to the end.
		pars := []int{1 + rng.IntN(5)}
		var got []string
		var positions [][]byte
		for range 1 + rng.IntN(3) {
			p := pars[len(pars)-1]
			read, cuts := splitRun(t, rng, src, p, len(index)/p/batch, positions)
			got, positions = append(got, slices.Concat(read...)...), cuts
			pars = append(pars, 1+rng.IntN(5))
		}
		par := pars[len(pars)-1]
		if trial%5 == 0 {
			par = len(positions) // the same parallelism: like Seek
		}
		name := fmt.Sprintf("trial %d (csv %v, header %v, dead %v, batch %d, chunk %d, runs %v then %d)", trial, csv, header, dead, batch, chunk, pars[:len(pars)-1], par)
		for i := range par {
			ctx := weir.SourceContext{Instance: i, Parallelism: par}
			r, s := seekable(t, src, ctx)
			if err := r.(weir.Rescalable).SeekSplits(positions); err != nil {
				t.Fatalf("%s: SeekSplits on %d: %v", name, i, err)
			}
			pos0, _ := s.Position(0)
			share, err := readRest(r)
			r.Close()
			if err != nil {
				t.Fatalf("%s: reader %d: %v", name, i, err)
			}
			for k, l := range share {
				if _, ok := index[l]; !ok || k > 0 && index[l] <= index[share[k-1]] {
					t.Fatalf("%s: reader %d read %q, out of order or not a line kept", name, i, share)
				}
			}
			got = append(got, share...)
			// Seek to the position a resumed reader has at first reads
			// the same.
			r2, s2 := seekable(t, src, ctx)
			if err := s2.Seek(pos0); err != nil {
				t.Fatalf("%s: Seek(%x): %v", name, pos0, err)
			}
			if again, _ := s2.Position(0); !bytes.Equal(again, pos0) {
				t.Fatalf("%s: Position(0) after Seek = %x; want %x", name, again, pos0)
			}
			if again, err := readRest(r2); err != nil || !slices.Equal(again, share) {
				t.Fatalf("%s: reader %d read %q after Seek, %v; want %q", name, i, again, err, share)
			}
			r2.Close()
		}
		slices.SortFunc(got, func(a, b string) int { return index[a] - index[b] })
		if len(got) != len(index) || slices.ContainsFunc(got, func(l string) bool { _, ok := index[l]; return !ok }) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Fatalf("%s: read %q over the runs; want each of the %d lines once", name, got, len(index))
		}
	}
}

func TestSeekSplitsLineNumbers(t *testing.T) {
	// A line that fails after a rescale names its file and line, whatever
	// piece of it the reader resumed in.
	files := []testFile{
		genFile("a", 50, 0),
		func() testFile { f := genFile("b", 40, 90); f.crlf = true; return f }(),
		func() testFile { f := genFile("c", 30, 0); f.noFinal = true; return f }(),
	}
	paths := writeFiles(t, files)
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		f := rng.IntN(len(files))
		line := 1 + rng.IntN(len(files[f].lines))
		if files[f].lines[line-1] == "" {
			continue
		}
		opts := Options{BatchSize: 1 + rng.IntN(5), chunkSize: 16, Header: rng.IntN(2) == 0}
		p, q := 1+rng.IntN(5), 1+rng.IntN(5)
		read, cuts := splitRun(t, rng, JSONLines(paths, identity, opts), p, 20/p, nil)
		prefix := fmt.Sprintf("%s:%d:", files[f].name, line)
		wasRead := slices.ContainsFunc(slices.Concat(read...), func(l string) bool { return strings.HasPrefix(l, prefix) })
		skipped := opts.Header && line == 1
		src := JSONLines(paths, failOn(files[f].name, line), opts)
		var errs []string
		for i := range q {
			r, _ := seekable(t, src, weir.SourceContext{Instance: i, Parallelism: q})
			if err := r.(weir.Rescalable).SeekSplits(cuts); err != nil {
				t.Fatal(err)
			}
			if _, err := readRest(r); err != nil {
				errs = append(errs, err.Error())
			}
			r.Close()
		}
		want := []string{fmt.Sprintf("file: %s:%d: boom", paths[f], line)}
		if wasRead || skipped {
			want = nil
		}
		if !slices.Equal(errs, want) {
			t.Fatalf("trial %d: line %s%d, %d then %d readers, header %v: errors %q; want %q", trial, files[f].name, line, p, q, opts.Header, errs, want)
		}
	}
}

// encodePos encodes p, a position over the files of r.
func encodePos(r *reader[string], p filePos) []byte {
	b := []byte{p.format}
	for _, v := range []uint64{p.inst, p.par, uint64(len(r.paths))} {
		b = binary.AppendUvarint(b, v)
	}
	b = binary.LittleEndian.AppendUint64(b, r.pos.fp)
	b = binary.AppendUvarint(b, uint64(len(p.segs)))
	for _, sg := range p.segs {
		b = binary.AppendUvarint(b, uint64(sg.file))
		b = binary.AppendUvarint(b, uint64(r.pos.sizes[sg.file]))
		if p.format == posSplitFormat {
			b = binary.AppendUvarint(b, uint64(sg.lo))
			b = binary.AppendUvarint(b, uint64(sg.hi))
		}
	}
	b = binary.AppendUvarint(b, uint64(p.seg))
	if !p.begun {
		return append(b, 0)
	}
	b = append(b, 1)
	for _, v := range []int64{p.start, p.lines, p.off} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	return b
}

func TestSeekSplitsBad(t *testing.T) {
	files := []testFile{genFile("a", 10, 0), genFile("b", 60, 0)}
	paths := writeFiles(t, files)
	src := Lines(paths, Options{BatchSize: 4})
	_, cuts := splitRun(t, rand.New(rand.NewPCG(1, 2)), src, 2, 2, nil)
	open := func(i int) *reader[string] {
		r, _ := seekable(t, src, weir.SourceContext{Instance: i, Parallelism: 3})
		return r.(*reader[string])
	}
	r := open(0)
	p1, err := r.decodePos(cuts[1], func(uint64, uint64) error { return nil })
	if err != nil || !p1.begun || p1.off == p1.start {
		t.Fatalf("position %x: %+v, %v; want one in the middle of a segment", cuts[1], p1, err)
	}
	with := func(change func(p *filePos)) []byte {
		p := p1
		p.segs = slices.Clone(p.segs)
		change(&p)
		return encodePos(r, p)
	}
	other := writeFiles(t, []testFile{files[0], genFile("b", 61, 0)})
	_, otherCuts := splitRun(t, rand.New(rand.NewPCG(1, 2)), Lines(other, Options{BatchSize: 4}), 2, 2, nil)
	tests := []struct {
		name, want string
		positions  [][]byte
	}{
		{"none", "file: SeekSplits without positions", nil},
		{"too few", "file: position 0 of 1: position of instance 0 of 2", cuts[:1]},
		{"too many", "file: position 0 of 3: position of instance 0 of 2", [][]byte{cuts[0], cuts[1], cuts[1]}},
		{"order", "file: position 0 of 2: position of instance 1 of 2", [][]byte{cuts[1], cuts[0]}},
		{"other files", "file: position 0 of 2: " + paths[1] + " has 861 bytes, 870 when the position was taken", otherCuts},
		{"truncated", "file: position 1 of 2: position of 12 bytes is truncated", [][]byte{cuts[0], cuts[1][:12]}},
		{"format", "file: position 1 of 2: position format 3, want 1 or 2", [][]byte{cuts[0], with(func(p *filePos) { p.format = 3 })}},
		{"mid-line", "not the start of a line", [][]byte{cuts[0], with(func(p *filePos) { p.off++ })}},
		{"lines", "file: position 1 of 2: " + paths[1] + ": position of 0 lines", [][]byte{cuts[0], with(func(p *filePos) { p.lines = 0 })}},
		{"segment", "outside the share of instance 1 of 2", [][]byte{cuts[0], with(func(p *filePos) {
			p.format, p.segs[0].lo, p.segs[0].hi = posSplitFormat, 0, 5
		})}},
		{"segment order", "out of order or empty", [][]byte{cuts[0], with(func(p *filePos) {
			p.format, p.segs = posSplitFormat, []segment{{1, 50, 60}, {1, 40, 45}}
		})}},
	}
	for _, tt := range tests {
		// Only the reader that resumes at an offset checks that a line
		// starts there: the first error of the three counts.
		var err error
		for i := 0; i < 3 && err == nil; i++ {
			err = open(i).SeekSplits(tt.positions)
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "file: ") {
			t.Errorf("%s: SeekSplits = %v; want an error with %q", tt.name, err, tt.want)
		}
	}
	// A file that changed size is named.
	if err := os.WriteFile(paths[1], []byte(files[1].content()+"b:61:x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("file: position 0 of 2: %s has %d bytes, %d when", paths[1], len(files[1].content())+7, len(files[1].content()))
	if err := open(0).SeekSplits(cuts); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("SeekSplits after a file grew: %v; want %q", err, want)
	}
}

func FuzzSeekSplitsFile(f *testing.F) {
	files := []testFile{genFile("a", 30, 0), func() testFile { f := genFile("b", 20, 40); f.crlf = true; return f }()}
	paths := writeFiles(f, files)
	index := make(map[string]bool)
	for _, l := range wantLines(files, true) {
		index[l] = true
	}
	src := Lines(paths, Options{BatchSize: 5, Header: true, chunkSize: 16})
	rng := rand.New(rand.NewPCG(5, 6))
	for range 8 {
		_, cuts := splitRun(f, rng, src, 2, 4, nil)
		f.Add(cuts[0], cuts[1])
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		seen := make(map[string]bool)
		for i := range 3 {
			r, _ := seekable(t, src, weir.SourceContext{Instance: i, Parallelism: 3})
			if err := r.(weir.Rescalable).SeekSplits([][]byte{a, b}); err != nil {
				if !strings.HasPrefix(err.Error(), "file: ") {
					t.Fatalf("error without the package prefix: %v", err)
				}
				r.Close()
				continue
			}
			got, err := readRest(r)
			r.Close()
			if err != nil {
				t.Fatalf("reader %d: %v", i, err)
			}
			for _, l := range got {
				if !index[l] || seen[l] {
					t.Fatalf("reader %d read %q, not a line or twice", i, l)
				}
				seen[l] = true
			}
		}
	})
}
