package engine

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/checkpoint"
)

// baseSafe says a base is still there for the new owner exactly when it
// survives Prune after every checkpoint that can complete before the new
// owner reads it has completed: those after it up to the epoch of the
// marker before the handover's.
func TestBaseSafe(t *testing.T) {
	for _, every := range []uint64{1, 3, 10} {
		for _, keep := range []int{1, 2, 3} {
			for n := every; n <= 4*every; n += every {
				for prev := n - 1; prev <= n+uint64(keep+2)*every; prev++ {
					m := checkpoint.MemFS()
					s, err := checkpoint.Open(m, "/ckpt", nil)
					if err != nil {
						t.Fatal(err)
					}
					for c := n; c <= max(n, prev); c += every {
						blob := []checkpoint.StateBlob{{Operator: "op", KeyGroup: 1, Data: []byte{byte(c)}}}
						if err := s.WritePart(checkpoint.Part{Checkpoint: c, Epoch: c, Processes: 1, State: blob}); err != nil {
							t.Fatal(err)
						}
						if ok, err := s.Complete(c, 1); !ok || err != nil {
							t.Fatal(ok, err)
						}
						if err := s.Prune(keep); err != nil {
							t.Fatal(err)
						}
					}
					_, there, err := s.ReadBlob(n, "op", 1)
					if err != nil && !errors.Is(err, fs.ErrNotExist) {
						t.Fatal(err)
					}
					if safe := baseSafe(n, prev, every, keep); safe && !there {
						t.Errorf("every %d, keep %d: base %d at the marker after %d is said safe, and is pruned", every, keep, n, prev)
					} else if !safe && there && prev >= n {
						t.Errorf("every %d, keep %d: base %d at the marker after %d is said unsafe, and is kept", every, keep, n, prev)
					}
				}
			}
		}
	}
}

// A delta whose base the new owner cannot read, or reads other than the
// sender did, fails with an error that names the checkpoint, the operator
// and the key group.
func TestMergedNamesTheBase(t *testing.T) {
	s, err := checkpoint.Open(checkpoint.OSFS(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	x := &handover{h: &handovers{reuse: reuse{ckpt: &coordinator{store: s}}}, task: "win", inst: 1}
	delta := []parcelBlob{{StateBlob: checkpoint.StateBlob{Operator: "win", KeyGroup: 5, Data: []byte("d")}, Base: 7, BaseCRC: 9}}
	want := func(err error, what string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "key group 5 of win") || !strings.Contains(err.Error(), "checkpoint 7") ||
			!strings.Contains(err.Error(), what) {
			t.Errorf("error %v; want one naming key group 5 of win, checkpoint 7 and %q", err, what)
		}
	}
	_, err = x.merged(0, delta)
	want(err, "cannot be read here")
	base := []byte("base")
	p := checkpoint.Part{Checkpoint: 7, Epoch: 7, Processes: 1, State: []checkpoint.StateBlob{{Operator: "win", KeyGroup: 5, Data: base}}}
	if err := s.WritePart(p); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Complete(7, 1); !ok || err != nil {
		t.Fatal(ok, err)
	}
	_, err = x.merged(0, delta)
	want(err, fmt.Sprintf("CRC %08x, not the sender's 00000009", crc32.Checksum(base, castagnoli)))
	delta[0].KeyGroup = 6
	_, err = x.merged(0, delta)
	if err == nil || !strings.Contains(err.Error(), "holds no blob") {
		t.Errorf("a base without the key group: %v", err)
	}
	// A blob that goes whole needs no checkpoint.
	whole := []parcelBlob{{StateBlob: checkpoint.StateBlob{Operator: "win", KeyGroup: 5, Data: []byte("w")}}}
	if got, err := (&handover{h: &handovers{}}).merged(0, whole); err != nil || string(got[0].Data) != "w" {
		t.Errorf("a whole blob: %v, %v", got, err)
	}
}
