package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/migrate"
	"github.com/weirstream/weir/internal/partition"
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
