package weir_test

import (
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir"
)

// seekRead reads r to the end and returns the records.
func seekRead[T any](t testing.TB, r weir.Reader[T]) []T {
	t.Helper()
	var out []T
	for {
		b, err := r.Read()
		out = append(out, b...)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestSliceSourceSeek(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 400 {
		n := rng.IntN(60)
		recs := make([]int, n)
		for i := range recs {
			recs[i] = i*7 + 3
		}
		src := weir.SliceSource[int]{Records: recs, BatchSize: 1 + rng.IntN(9)}
		par := 1 + rng.IntN(4)
		ctx := weir.SourceContext{Instance: rng.IntN(par), Parallelism: par}
		want := recs[n*ctx.Instance/par : n*(ctx.Instance+1)/par]
		// Read reads batches (-1: until io.EOF), then a position is taken
		// after a random prefix of the last one.
		reads := rng.IntN(len(want)/src.BatchSize+3) - 1
		r, err := src.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var before, last []int
		for k := 0; reads < 0 || k < reads; k++ {
			before = append(before, last...)
			last, err = r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
		}
		used := 0
		if len(last) > 0 {
			used = rng.IntN(len(last) + 1)
		}
		pos, err := r.(weir.Seekable).Position(used)
		if err != nil {
			t.Fatalf("trial %d: Position(%d): %v", trial, used, err)
		}
		before = append(before, last[:used]...)
		a := append(slices.Clone(before), last[used:]...)
		a = append(a, seekRead(t, r)...)
		if !slices.Equal(a, want) {
			t.Fatalf("trial %d: read %v, want the share %v", trial, a, want)
		}
		r2, _ := src.Open(ctx)
		if err := r2.(weir.Seekable).Seek(pos); err != nil {
			t.Fatalf("trial %d: Seek: %v", trial, err)
		}
		if b := append(before, seekRead(t, r2)...); !slices.Equal(b, a) {
			t.Fatalf("trial %d (%d of %d, batch %d, %d reads, used %d): after Seek %v, want %v", trial, ctx.Instance, par, src.BatchSize, reads, used, b, a)
		}
	}
}

func TestSliceSourceBadPositions(t *testing.T) {
	src := weir.SliceSource[int]{Records: make([]int, 10), BatchSize: 3}
	ctx := weir.SourceContext{Instance: 1, Parallelism: 2}
	open := func() weir.Seekable {
		r, _ := src.Open(ctx)
		return r.(weir.Seekable)
	}
	r := open()
	if _, err := r.Position(1); err == nil || !strings.Contains(err.Error(), "weir: SliceSource") {
		t.Errorf("Position(1) before any Read: %v; want an error", err)
	}
	good, _ := r.Position(0)
	uv := func(b []byte, vs ...uint64) []byte {
		for _, v := range vs {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	tests := []struct {
		name, want string
		pos        []byte
	}{
		{"empty", "empty position", nil},
		{"format", "format 9", append([]byte{9}, good[1:]...)},
		{"truncated", "truncated", good[:len(good)-1]},
		{"trailing", "too many", append(slices.Clone(good), 0)},
		{"instance", "instance 0 of 2", uv([]byte{1}, 0, 2, 5, 0)},
		{"share", "share of 6 records", uv([]byte{1}, 1, 2, 6, 0)},
		{"beyond", "record 6, beyond the share of 5", uv([]byte{1}, 1, 2, 5, 6)},
	}
	for _, tt := range tests {
		err := open().Seek(tt.pos)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "weir: SliceSource: ") {
			t.Errorf("%s: Seek(%x) = %v; want an error with %q", tt.name, tt.pos, err, tt.want)
		}
	}
	if err := open().Seek(uv([]byte{1}, 1, 2, 5, 5)); err != nil {
		t.Errorf("Seek to the end: %v", err)
	}
}

func FuzzSeekSlice(f *testing.F) {
	src := weir.SliceSource[int]{Records: make([]int, 10), BatchSize: 3}
	ctx := weir.SourceContext{Instance: 1, Parallelism: 2}
	r, _ := src.Open(ctx)
	r.Read()
	for used := range 4 {
		pos, _ := r.(weir.Seekable).Position(used)
		f.Add(pos)
	}
	f.Fuzz(func(t *testing.T, pos []byte) {
		r, _ := src.Open(ctx)
		if err := r.(weir.Seekable).Seek(pos); err != nil {
			return
		}
		n := len(seekRead(t, r))
		if n > 5 {
			t.Fatalf("read %d records after Seek(%x); the share has 5", n, pos)
		}
	})
}

// splitRun opens the par readers of src, resumes them from positions with
// SeekSplits unless positions is nil, and reads on each a random number of
// batches (none, some, or to the end). It returns the records each read
// before the position it then took after a random prefix of its last
// batch, and the positions.
func splitRun(t testing.TB, rng *rand.Rand, src weir.SliceSource[int], par int, positions [][]byte) ([][]int, [][]byte) {
	t.Helper()
	read, cuts := make([][]int, par), make([][]byte, par)
	for i := range par {
		r, err := src.Open(weir.SourceContext{Instance: i, Parallelism: par})
		if err != nil {
			t.Fatal(err)
		}
		if positions != nil {
			if err := r.(weir.Rescalable).SeekSplits(positions); err != nil {
				t.Fatalf("SeekSplits on %d of %d: %v", i, par, err)
			}
		}
		reads := rng.IntN(len(src.Records)/par/src.BatchSize+3) - 1
		var last []int
		for k := 0; reads < 0 || k < reads; k++ {
			read[i] = append(read[i], last...)
			if last, err = r.Read(); errors.Is(err, io.EOF) {
				break
			}
		}
		used := 0
		if len(last) > 0 {
			used = rng.IntN(len(last) + 1)
		}
		read[i] = append(read[i], last[:used]...)
		if cuts[i], err = r.(weir.Seekable).Position(used); err != nil {
			t.Fatal(err)
		}
	}
	return read, cuts
}

func TestSliceSourceSeekSplits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 1500 {
		n := rng.IntN(80)
		recs := make([]int, n)
		for i := range recs {
			recs[i] = i
		}
		src := weir.SliceSource[int]{Records: recs, BatchSize: 1 + rng.IntN(9)}
		// Up to three runs with random parallelisms, each stopped at random
		// cuts, then a last one that reads to the end.
		pars := []int{1 + rng.IntN(5)}
		var done []int
		var positions [][]byte
		for range rng.IntN(3) + 1 {
			read, cuts := splitRun(t, rng, src, pars[len(pars)-1], positions)
			done, positions = append(done, slices.Concat(read...)...), cuts
			pars = append(pars, 1+rng.IntN(5))
		}
		par := pars[len(pars)-1]
		if trial%5 == 0 {
			par = pars[len(pars)-2] // the same parallelism: like Seek
		}
		got := slices.Clone(done)
		for i := range par {
			ctx := weir.SourceContext{Instance: i, Parallelism: par}
			r, _ := src.Open(ctx)
			if err := r.(weir.Rescalable).SeekSplits(positions); err != nil {
				t.Fatalf("trial %d, runs %v: SeekSplits: %v", trial, pars, err)
			}
			share := seekRead(t, r)
			lo, hi := n*i/par, n*(i+1)/par
			for k, v := range share {
				if v < lo || v >= hi || k > 0 && v <= share[k-1] {
					t.Fatalf("trial %d, runs %v: reader %d of %d read %v, not in order in its share [%d, %d)", trial, pars, i, par, share, lo, hi)
				}
			}
			if len(positions) == par {
				r2, _ := src.Open(ctx)
				if err := r2.(weir.Seekable).Seek(positions[i]); err != nil {
					t.Fatal(err)
				}
				if want := seekRead(t, r2); !slices.Equal(share, want) {
					t.Fatalf("trial %d, runs %v: SeekSplits read %v, Seek %v", trial, pars, share, want)
				}
			}
			got = append(got, share...)
		}
		slices.Sort(got)
		if !slices.Equal(got, recs) {
			t.Fatalf("trial %d, runs %v: read %v over the runs; want each of the %d records once", trial, pars, got, n)
		}
	}
}

func TestSliceSourceSeekSplitsBad(t *testing.T) {
	src := weir.SliceSource[int]{Records: make([]int, 20), BatchSize: 3}
	_, cuts := splitRun(t, rand.New(rand.NewPCG(1, 1)), src, 2, nil)
	_, otherCuts := splitRun(t, rand.New(rand.NewPCG(1, 1)), weir.SliceSource[int]{Records: make([]int, 21), BatchSize: 3}, 2, nil)
	uv := func(b []byte, vs ...uint64) []byte {
		for _, v := range vs {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	tests := []struct {
		name, want string
		positions  [][]byte
	}{
		{"none", "without positions", nil},
		{"too few", "position 0 of 1 is of instance 0 of 2", cuts[:1]},
		{"too many", "position 0 of 3 is of instance 0 of 2", [][]byte{cuts[0], cuts[1], cuts[1]}},
		{"order", "position 0 of 2 is of instance 1 of 2", [][]byte{cuts[1], cuts[0]}},
		{"other input", "position 1 of 2 is in a share of 11 records, instance 1 of 2 of these 20 records has 10", otherCuts},
		{"truncated", "position 1 of 2: position of 4 bytes is truncated", [][]byte{cuts[0], cuts[1][:4]}},
		{"empty", "position 0 of 2: empty position", [][]byte{nil, cuts[1]}},
		{"format", "position format 3, want 1 or 2", [][]byte{cuts[0], {3}}},
		{"beyond", "record 11, beyond the share of 10", [][]byte{cuts[0], uv([]byte{1}, 1, 2, 10, 11)}},
		{"no ranges", "0 ranges", [][]byte{cuts[0], uv([]byte{2}, 1, 2, 10, 0)}},
		{"range order", "range [2, 4) after record 5", [][]byte{cuts[0], uv([]byte{2}, 1, 2, 10, 2, 3, 5, 2, 4)}},
		{"empty range", "range [3, 3)", [][]byte{cuts[0], uv([]byte{2}, 1, 2, 10, 1, 3, 3)}},
		{"range beyond", "range [3, 11)", [][]byte{cuts[0], uv([]byte{2}, 1, 2, 10, 1, 3, 11)}},
	}
	for _, tt := range tests {
		r, _ := src.Open(weir.SourceContext{Instance: 0, Parallelism: 3})
		err := r.(weir.Rescalable).SeekSplits(tt.positions)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "weir: SliceSource: ") {
			t.Errorf("%s: SeekSplits = %v; want an error with %q", tt.name, err, tt.want)
		}
	}
}

func FuzzSeekSplits(f *testing.F) {
	src := weir.SliceSource[int]{Records: make([]int, 17), BatchSize: 3}
	for i := range src.Records {
		src.Records[i] = i
	}
	rng := rand.New(rand.NewPCG(2, 3))
	for range 8 {
		_, cuts := splitRun(f, rng, src, 2, nil)
		f.Add(cuts[0], cuts[1])
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		seen := make(map[int]bool)
		for i := range 3 {
			r, _ := src.Open(weir.SourceContext{Instance: i, Parallelism: 3})
			if err := r.(weir.Rescalable).SeekSplits([][]byte{a, b}); err != nil {
				if !strings.HasPrefix(err.Error(), "weir: SliceSource: ") {
					t.Fatalf("error without the prefix: %v", err)
				}
				continue
			}
			prev := -1
			for _, v := range seekRead(t, r) {
				if v <= prev || v < 17*i/3 || v >= 17*(i+1)/3 || seen[v] {
					t.Fatalf("reader %d of 3 read record %d after %d, out of order, out of its share or twice", i, v, prev)
				}
				prev, seen[v] = v, true
			}
		}
	})
}
