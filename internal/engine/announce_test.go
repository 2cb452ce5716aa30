package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/migrate"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/runtime"
)

// A malformed announcement from a peer stops the run with an error that
// names the peer and wraps migrate.ErrCorrupt; it never panics.
func TestHeardMalformed(t *testing.T) {
	a := partition.Contiguous(16, 2)
	b, err := partition.NewTable(9, 2, []int{1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	good, err := migrate.EncodeSteps("keyed/2", []*partition.Table{a, b})
	if err != nil {
		t.Fatal(err)
	}
	flipped := []byte(string(good))
	flipped[len(flipped)/2] ^= 1
	for _, bad := range [][]byte{nil, good[:len(good)-1], flipped, []byte("WRRC\x02"), append([]byte(string(good)), 0)} {
		rt := runtime.New(runtime.Config{Interval: time.Second})
		j := &Job{rt: rt}
		j.heard(3, [][]byte{bad})
		if err := rt.Err(); !errors.Is(err, migrate.ErrCorrupt) || !strings.Contains(err.Error(), "process 3 announced") {
			t.Errorf("%x: %v", bad, err)
		}
	}
}

// The routing a checkpoint records comes back as the same tables, also
// when the steps still to come hold more owners than one encoding may
// (migrate.MaxStepOwners), and the record takes a few bytes a step.
func TestRoutingSnapRoundTrip(t *testing.T) {
	const groups = 1 << 15
	owner := make([]int, groups)
	first, err := partition.NewTable(0, 4, owner)
	if err != nil {
		t.Fatal(err)
	}
	s := routing.New(first)
	steps := migrate.MaxStepOwners/groups + 2 // two encodings
	for i := range steps {
		owner[i] = 1 + i%3
		tb, err := partition.NewTable(uint64(10+i), 4, owner)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Add(tb); err != nil {
			t.Fatal(err)
		}
	}
	b, err := routingSnap{&handover{task: "count", sched: s, epoch: 9}}.SnapshotInstance()
	if err != nil {
		t.Fatal(err)
	}
	if most := 2*groups + 8*steps + 100; len(b) > most {
		t.Errorf("%d bytes for %d steps of %d key groups; want at most %d", len(b), steps, groups, most)
	}
	got, err := decodeTables(b)
	if err != nil {
		t.Fatal(err)
	}
	want := s.Tables(10)
	if len(got) != len(want) {
		t.Fatalf("%d tables, want %d", len(got), len(want))
	}
	for i, tb := range got {
		if tb.From != want[i].From || !tb.Equal(want[i]) {
			t.Fatalf("table %d: %v, want %v", i, tb, want[i])
		}
	}
}
