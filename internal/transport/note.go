package transport

import (
	"encoding/binary"
	"fmt"
)

// A note is what a member frame says about the membership of an elastic
// mesh, from the point of view of its sender:
//
//	op          uint8   noteJoined, noteLeft or noteSynced
//	slot        uint16  the slot the note is about (0 for noteSynced)
//	incarnation uint64  the process in that slot (0 for noteSynced)
//
// On a new connection each side first sends a noteJoined for every
// process it is connected to (its members at that moment, the new peer
// aside), then one noteSynced; later it sends a noteJoined when it
// connects to another process and a noteLeft when one leaves it in order.
type note struct {
	op   noteOp
	slot uint16
	inc  uint64
}

// noteSize is the payload length of a member frame.
const noteSize = 1 + 2 + 8

// noteOp is what a note says.
type noteOp uint8

const (
	noteJoined noteOp = 1 + iota // the sender connected to the process in slot
	noteLeft                     // the process in slot left the sender in order
	noteSynced                   // the notes of the sender's members at connection are all sent
)

func (o noteOp) String() string {
	switch o {
	case noteJoined:
		return "joined"
	case noteLeft:
		return "left"
	case noteSynced:
		return "synced"
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// appendNote appends the encoding of n to b.
func appendNote(b []byte, n note) []byte {
	b = append(b, byte(n.op))
	b = binary.BigEndian.AppendUint16(b, n.slot)
	return binary.BigEndian.AppendUint64(b, n.inc)
}

// decodeNote decodes a member frame's payload: a known op, and no slot
// or incarnation on noteSynced, so that every note has one encoding.
func decodeNote(b []byte) (note, error) {
	if len(b) != noteSize {
		return note{}, fmt.Errorf("member note of %d bytes; want %d", len(b), noteSize)
	}
	n := note{op: noteOp(b[0]), slot: binary.BigEndian.Uint16(b[1:]), inc: binary.BigEndian.Uint64(b[3:])}
	switch {
	case n.op < noteJoined || n.op > noteSynced:
		return note{}, fmt.Errorf("member note of unknown %v", n.op)
	case n.op == noteSynced && (n.slot != 0 || n.inc != 0):
		return note{}, fmt.Errorf("synced note about slot %d, incarnation %d", n.slot, n.inc)
	case n.op != noteSynced && n.inc == 0:
		return note{}, fmt.Errorf("%v note about slot %d without an incarnation", n.op, n.slot)
	}
	return n, nil
}
