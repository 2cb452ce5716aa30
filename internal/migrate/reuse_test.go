package migrate

import (
	"testing"

	"github.com/weirstream/weir/internal/partition"
)

func TestReuse(t *testing.T) {
	moves := []Move{{0, 0, 1}, {1, 0, 2}, {2, 1, 2}, {3, 1, 0}, {4, 2, 0}}
	state := []GroupState{
		{Bytes: 1000, InCheckpoint: true, Changed: 100}, // delta
		{Bytes: 1000, InCheckpoint: true, Changed: 100}, // instance 2 cannot read its blob
		{Bytes: 500}, // no blob: whole
		{Bytes: 300, InCheckpoint: true, Changed: 300}, // the delta is no smaller: whole
		{Bytes: 0, InCheckpoint: true},                 // empty: whole, zero bytes
	}
	canRead := func(to int, kg partition.KeyGroup) bool { return to != 2 }
	got, sum, err := Reuse(moves, state, canRead)
	if err != nil {
		t.Fatal(err)
	}
	want := []Shipment{{moves[0], true, 100}, {moves[1], false, 1000}, {moves[2], false, 500},
		{moves[3], false, 300}, {moves[4], false, 0}}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("shipment %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if sum != (Shipped{Bytes: 100 + 1000 + 500 + 300, Whole: 1000 + 1000 + 500 + 300, Deltas: 1}) {
		t.Fatalf("%+v", sum)
	}
	if _, _, err := Reuse([]Move{{9, 0, 1}}, state, canRead); err == nil {
		t.Fatal("a key group outside the state")
	}
	if _, _, err := Reuse(moves[:1], []GroupState{{Bytes: -1}}, canRead); err == nil {
		t.Fatal("negative size")
	}
}
