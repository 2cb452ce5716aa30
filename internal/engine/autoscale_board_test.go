package engine

import (
	"testing"

	"github.com/weirstream/weir/internal/agree"
)

// A process's share of the sizing board carries its newest frozen
// figures and digests to a peer; a round waits until every process has
// frozen past its epoch, and is incomplete when one passed over it; the
// digests agree only when every process sent the same.
func TestSizingBoard(t *testing.T) {
	a, b := newSizingBoard(10), newSizingBoard(10)
	for e := uint64(10); e <= 60; e += 10 {
		a.putFrozen(0, e, []byte{byte(e)})
		a.putDigest(0, e, agree.Digest{byte(e)})
	}
	if err := b.hear(0, a.encode(0)); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.frozen[0][20]; ok || len(b.frozen[0]) != sharedRounds || len(b.digests[0]) != sharedRounds {
		t.Fatalf("heard %d frozen, %d digests (20 among them: %v); want the newest %d", len(b.frozen[0]), len(b.digests[0]), ok, sharedRounds)
	}
	if err := b.hear(0, []byte{9, 9}); err == nil {
		t.Error("a share that does not decode was taken")
	}
	odd := newSizingBoard(10)
	odd.putFrozen(2, 15, []byte{1})
	if err := b.hear(2, odd.encode(2)); err == nil || len(b.frozen[2]) != 0 {
		t.Errorf("a share of epoch 15 with policy intervals of 10 epochs: %v, %d kept", err, len(b.frozen[2]))
	}
	procs := []int{0, 1}
	stays := func(int) bool { return false }
	b.putFrozen(1, 30, []byte{1})
	if _, ready, _ := b.round(40, procs, stays); ready {
		t.Error("round 40 ready before process 1 froze past it")
	}
	if _, ready, complete := b.round(40, procs, func(p int) bool { return p == 1 }); !ready || complete {
		t.Errorf("round 40, process 1 gone without it: ready %v complete %v; want ready, incomplete", ready, complete)
	}
	r, ready, complete := b.round(30, procs, stays)
	if !ready || !complete || len(r.Frozen) != 2 || r.Frozen[1].Process != 1 {
		t.Errorf("round 30: %+v ready %v complete %v", r, ready, complete)
	}
	b.putFrozen(1, 50, []byte{1})
	if _, ready, complete := b.round(40, procs, stays); !ready || complete {
		t.Errorf("round 40, passed over by process 1: ready %v complete %v; want ready, incomplete", ready, complete)
	}
	if e, ok := b.next(30, procs); !ok || e != 40 {
		t.Errorf("next after 30: %d %v", e, ok)
	}
	d := agree.Digest{50}
	if heard, _ := b.agreed(50, procs, d); heard {
		t.Error("agreed before process 1's digest came")
	}
	b.putDigest(1, 50, agree.Digest{51})
	if heard, same := b.agreed(50, procs, d); !heard || same {
		t.Errorf("differing digests: heard %v same %v", heard, same)
	}
	b.putDigest(1, 50, d)
	if heard, same := b.agreed(50, procs, d); !heard || !same {
		t.Errorf("equal digests: heard %v same %v", heard, same)
	}
	b.prune(50)
	if len(b.frozen[0]) != 2 || b.newestOthers(1) != 60 {
		t.Errorf("after pruning before 50: %d frozen of process 0, newest of others %d", len(b.frozen[0]), b.newestOthers(1))
	}
}
