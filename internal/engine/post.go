package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/weirstream/weir/internal/bin"
	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/transport"
)

// handoverChannel is the transport channel that carries key groups'
// state between processes; channelID never makes it (edges stop short of
// 4095), and the summaries use 0xFFFFFFFF.
const handoverChannel = 0xFFFFFFFE

// parcelKey names the state one instance hands another at one epoch
// boundary: the key groups of task (a keyed chain of par instances) that
// instance from owned until epoch Epoch and instance to owns after it.
type parcelKey struct {
	task     string
	par      int
	epoch    uint64
	from, to int
}

// parcel is what arrived for a key: the blobs, complete once the sender
// said it sent all of them.
type parcel struct {
	blobs    []parcelBlob
	complete bool
	// pieces of blobs still arriving from another process, by blob
	pending map[blobID]*parcelBlob
}

// parcelBlob is one operator's state of one key group in a parcel: the
// blob a checkpoint would hold or, if Base is set, a delta on the key
// group's blob in complete checkpoint Base, whose CRC-32C is BaseCRC
// (checkpoint reuse, reuse.go).
type parcelBlob struct {
	checkpoint.StateBlob
	Base    uint64
	BaseCRC uint32
}

type blobID struct {
	op string
	kg uint32
}

// postOffice holds the key groups' state in transit to this process's
// instances until they take it.
type postOffice struct {
	mu      sync.Mutex
	parcels map[parcelKey]*parcel
	arrived chan struct{} // closed and replaced at each completed parcel
	// ends holds, by instance of this process, the epoch of the final
	// marker at which it ended with its input: it hands nothing over
	// after it.
	ends map[instKey]uint64
	// closed marks the processes whose handover channel ended in order
	// (their process closed its end of the mesh), and proc says which
	// process runs an instance: a parcel such a process has not sent
	// never comes (peerClosed).
	closed map[int]bool
	proc   func(inst, par int) int
}

// peerClosed notes that process p closed its end of the mesh in order:
// it sent every parcel it hands over before, so a taker that still
// waits for one of its instances' takes an empty one. A process closes
// in order once its part of the job has ended (its keyed instances
// ended with their input: what they would owe for a later epoch is
// empty, as for ended) or once it left (it handed everything over
// before). A new process in p's slot is heard again (peerBack).
func (po *postOffice) peerClosed(p int) {
	po.mu.Lock()
	po.closed[p] = true
	close(po.arrived)
	po.arrived = make(chan struct{})
	po.mu.Unlock()
}

// peerBack notes that a new process holds slot p.
func (po *postOffice) peerBack(p int) {
	po.mu.Lock()
	delete(po.closed, p)
	po.mu.Unlock()
}

// started notes that instance k starts again: it has not ended.
func (po *postOffice) started(k instKey) {
	po.mu.Lock()
	delete(po.ends, k)
	po.mu.Unlock()
}

// instKey names one instance of a keyed task.
type instKey struct {
	task      string
	par, inst int
}

func newPostOffice() *postOffice {
	return &postOffice{parcels: map[parcelKey]*parcel{}, arrived: make(chan struct{}), ends: map[instKey]uint64{}, closed: map[int]bool{}}
}

// ended notes that instance k of this process ended with its input at
// the final marker of epoch e (not a retirement: the input ended). A
// taker that waits for a parcel of k for a later epoch (an instance that
// joined after the input ended, whose first marker is final too) takes
// an empty one: the steps after e never take force for k, and k's
// windows already fired at its final marker.
func (po *postOffice) ended(k instKey, e uint64) {
	po.mu.Lock()
	po.ends[k] = e
	close(po.arrived)
	po.arrived = make(chan struct{})
	po.mu.Unlock()
}

func (po *postOffice) get(k parcelKey) *parcel {
	p := po.parcels[k]
	if p == nil {
		p = &parcel{}
		po.parcels[k] = p
	}
	return p
}

// deliver hands a whole parcel over, from an instance of this process.
func (po *postOffice) deliver(k parcelKey, blobs []parcelBlob) {
	po.mu.Lock()
	p := po.get(k)
	p.blobs, p.complete = append(p.blobs, blobs...), true
	close(po.arrived)
	po.arrived = make(chan struct{})
	po.mu.Unlock()
}

// take waits until the parcel k has arrived and returns its blobs, or
// returns nil and false once done closes.
func (po *postOffice) take(k parcelKey, done <-chan struct{}) ([]parcelBlob, bool) {
	for {
		po.mu.Lock()
		if p := po.parcels[k]; p != nil && p.complete {
			delete(po.parcels, k)
			po.mu.Unlock()
			return p.blobs, true
		}
		if e, ok := po.ends[instKey{k.task, k.par, k.from}]; ok && k.epoch > e {
			po.mu.Unlock()
			return nil, true
		}
		if po.proc != nil && po.closed[po.proc(k.from, k.par)] {
			delete(po.parcels, k)
			po.mu.Unlock()
			return nil, true
		}
		wait := po.arrived
		po.mu.Unlock()
		select {
		case <-wait:
		case <-done:
			return nil, false
		}
	}
}

// The messages of the handover channel: a piece of a blob, or the end of
// a parcel with its count of blobs.
//
//	kind (1 piece, 2 end), task, par, epoch, from, to,
//	piece: operator, key group, base checkpoint (0: whole), base CRC,
//	       blob length, offset, bytes to the end
//	end: number of blobs
const (
	msgPiece = 1
	msgEnd   = 2
	// msgClose says the sending process hands nothing more over: its
	// keyed instances have all ended.
	msgClose = 3
	// maxPiece is the most of a blob one message carries.
	maxPiece = 4 << 20
)

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendHeader(b []byte, kind byte, k parcelKey) []byte {
	b = append(b, kind)
	b = appendString(b, k.task)
	for _, v := range []uint64{uint64(k.par), k.epoch, uint64(k.from), uint64(k.to)} {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

// ship sends a parcel to another process over s, in pieces.
func ship(s transport.Sender, k parcelKey, blobs []parcelBlob) (int64, error) {
	var sent int64
	for _, bl := range blobs {
		for off := 0; off == 0 || off < len(bl.Data); off += maxPiece {
			end := min(len(bl.Data), off+maxPiece)
			b := appendHeader(s.Buffer(), msgPiece, k)
			b = appendString(b, bl.Operator)
			b = binary.AppendUvarint(b, uint64(bl.KeyGroup))
			b = binary.AppendUvarint(b, bl.Base)
			b = binary.AppendUvarint(b, uint64(bl.BaseCRC))
			b = binary.AppendUvarint(b, uint64(len(bl.Data)))
			b = binary.AppendUvarint(b, uint64(off))
			b = append(b, bl.Data[off:end]...)
			if err := s.Send(b); err != nil {
				return sent, err
			}
			sent += int64(end - off)
			if end == len(bl.Data) {
				break
			}
		}
	}
	b := appendHeader(s.Buffer(), msgEnd, k)
	b = binary.AppendUvarint(b, uint64(len(blobs)))
	return sent, s.Send(b)
}

// maxBlob bounds the length of a blob a receiver assembles.
const maxBlob = 1 << 34

// errClosed is what receive returns for msgClose.
var errClosed = errors.New("closed")

// receive takes one message of the handover channel from process from.
func (po *postOffice) receive(from int, msg []byte) error {
	d := bin.Decoder{B: msg}
	kind := d.Byte()
	if kind == msgClose && len(msg) == 1 {
		return errClosed
	}
	k := parcelKey{task: d.String()}
	k.par, k.epoch, k.from, k.to = int(d.Int(1<<16+1)), d.Uvarint(), int(d.Int(1<<16)), int(d.Int(1<<16))
	if d.Err != nil {
		return fmt.Errorf("weir: a key-group handover from process %d: %w", from, d.Err)
	}
	po.mu.Lock()
	defer po.mu.Unlock()
	p := po.get(k)
	switch kind {
	case msgPiece:
		id := blobID{op: d.String()}
		id.kg = uint32(d.Int(1 << 32))
		base, crc := d.Uvarint(), uint32(d.Int(1<<32))
		total, off := d.Int(maxBlob), d.Uvarint()
		if d.Err != nil || off+uint64(len(d.B)) > uint64(total) {
			return fmt.Errorf("weir: a key-group handover from process %d: a corrupt piece", from)
		}
		if p.pending == nil {
			p.pending = map[blobID]*parcelBlob{}
		}
		bl := p.pending[id]
		if bl == nil {
			bl = &parcelBlob{StateBlob: checkpoint.StateBlob{Operator: id.op, KeyGroup: id.kg, Data: make([]byte, 0, total)},
				Base: base, BaseCRC: crc}
			p.pending[id] = bl
		}
		if uint64(len(bl.Data)) != off || bl.Base != base || bl.BaseCRC != crc {
			return fmt.Errorf("weir: a key-group handover from process %d: key group %d of %s out of order", from, id.kg, id.op)
		}
		bl.Data = append(bl.Data, d.B...)
		if int64(len(bl.Data)) == total {
			p.blobs = append(p.blobs, *bl)
			delete(p.pending, id)
		}
	case msgEnd:
		n := d.Uvarint()
		if d.Err != nil || len(p.pending) > 0 || uint64(len(p.blobs)) != n {
			return fmt.Errorf("weir: a key-group handover from process %d ended with %d of %d blobs", from, len(p.blobs), n)
		}
		p.complete = true
		close(po.arrived)
		po.arrived = make(chan struct{})
	default:
		return fmt.Errorf("weir: a key-group handover from process %d: unknown message %d", from, kind)
	}
	return nil
}
