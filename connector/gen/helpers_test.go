package gen

import (
	"errors"
	"io"
	"maps"
	"testing"

	"github.com/weirstream/weir"
)

// readAll reads instance inst of par of src to the end, checking that no
// batch exceeds maxBatch.
func readAll[T any](t testing.TB, src weir.Input[T], inst, par, maxBatch int) []T {
	t.Helper()
	r, err := src.Open(weir.SourceContext{Instance: inst, Parallelism: par})
	if err != nil {
		t.Fatalf("Open(%d of %d): %v", inst, par, err)
	}
	defer r.Close()
	var out []T
	for {
		b, err := r.Read()
		if len(b) > maxBatch {
			t.Fatalf("batch of %d records; want at most %d", len(b), maxBatch)
		}
		out = append(out, b...)
		if errors.Is(err, io.EOF) {
			if len(b) != 0 {
				t.Fatalf("io.EOF with %d records; want none", len(b))
			}
			return out
		}
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
	}
}

func counts[T comparable](recs []T) map[T]int {
	m := make(map[T]int)
	for _, r := range recs {
		m[r]++
	}
	return m
}

// checkSplit checks that the instances of src split into par emit exactly
// what one instance emits, as evenly as possible, and interleaved by global
// sequence number.
func checkSplit[T comparable](t *testing.T, src weir.Input[T], total, par int) {
	t.Helper()
	whole := readAll(t, src, 0, 1, 1<<20)
	if len(whole) != total {
		t.Fatalf("one instance read %d records; want %d", len(whole), total)
	}
	var union []T
	for i := range par {
		part := readAll(t, src, i, par, 1<<20)
		if want := (total - i + par - 1) / par; len(part) != want {
			t.Errorf("instance %d of %d read %d records; want %d", i, par, len(part), want)
		}
		for k, rec := range part {
			if seq := i + k*par; seq < len(whole) && whole[seq] != rec {
				t.Fatalf("instance %d of %d, record %d: got %v; want global record %d, %v", i, par, k, rec, seq, whole[seq])
			}
		}
		union = append(union, part...)
	}
	if got, want := counts(union), counts(whole); !maps.Equal(got, want) {
		t.Errorf("union of %d instances differs from one instance: %d vs %d distinct records", par, len(got), len(want))
	}
}

// splitCases are the (total, parallelism) pairs of the split tests.
var splitCases = []struct{ total, par int }{
	{1000, 1}, {1000, 2}, {1000, 3}, {1001, 7}, {50, 50}, {3, 5},
}
