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
func seekRead[T any](t *testing.T, r weir.Reader[T]) []T {
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
