package migrate

import (
	"fmt"

	"github.com/weirstream/weir/internal/partition"
)

// GroupState is what the old owner knows of one key group's state when it
// is about to move it.
type GroupState struct {
	// Bytes is the size of the state now.
	Bytes int64
	// InCheckpoint says the latest complete checkpoint holds a blob of
	// the key group.
	InCheckpoint bool
	// Changed is the size of what changed since that checkpoint: the
	// delta the destination must apply on top of the blob.
	Changed int64
}

// Shipment is what to send for one move: the whole state, or only the
// delta on top of the latest complete checkpoint's blob.
type Shipment struct {
	Move  Move
	Delta bool
	Bytes int64
}

// Shipped sums a set of shipments against shipping every state whole.
type Shipped struct {
	Bytes, Whole int64
	Deltas       int // moves that ship a delta
}

// Reuse says what to ship for each move (Madsen and Zhou's checkpoint
// reuse): only the delta when the key group has a blob in the latest
// complete checkpoint, the destination can read that blob and gains by
// it (canRead: it depends on where checkpoints are stored, and on whether
// the state would cross a network at all) and the delta is smaller than
// the whole state; the whole state otherwise. state is indexed by key
// group.
func Reuse(moves []Move, state []GroupState, canRead func(to int, kg partition.KeyGroup) bool) ([]Shipment, Shipped, error) {
	out := make([]Shipment, len(moves))
	var sum Shipped
	for i, m := range moves {
		if int(m.KeyGroup) >= len(state) {
			return nil, Shipped{}, fmt.Errorf("migrate: key group %d moves, the state covers %d", m.KeyGroup, len(state))
		}
		s := state[m.KeyGroup]
		if s.Bytes < 0 || s.Changed < 0 {
			return nil, Shipped{}, fmt.Errorf("migrate: key group %d has %d bytes with %d changed", m.KeyGroup, s.Bytes, s.Changed)
		}
		sh := Shipment{Move: m, Bytes: s.Bytes}
		if s.InCheckpoint && s.Changed < s.Bytes && canRead(m.To, m.KeyGroup) {
			sh.Delta, sh.Bytes = true, s.Changed
			sum.Deltas++
		}
		out[i] = sh
		sum.Bytes += sh.Bytes
		sum.Whole += s.Bytes
	}
	return out, sum, nil
}
