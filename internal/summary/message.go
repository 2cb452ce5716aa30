package summary

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Message is one process's summary.
type Message struct {
	Process int
	// Seq numbers a process's messages, from 1; a receiver keeps the
	// newest.
	Seq uint64
	// Final is set on the last message, sent when the process's part of
	// the job has ended: its counts are final.
	Final bool
	// Counts are the process's counters by name, in name order.
	Counts []Count
	// Complete is the newest checkpoint the process knows is complete;
	// Written is the newest checkpoint it wrote its part of.
	Complete, Written uint64
	// Stop is set once the process was asked to stop cleanly; StopAt is
	// then the checkpoint it proposes to stop at (0 in a job without
	// checkpoints).
	Stop   bool
	StopAt uint64
	// Stopped, on a final message, says the process's part ended by a
	// stop, not at the end of its input.
	Stopped bool
	// Ending says the process takes the job's input as ended and refuses
	// rescales and leaves from now on: every one it accepted before is in
	// the Reconfigs of this message or of earlier ones.
	Ending bool
	// Figures are the process's figures (internal/metrics' encoding),
	// opaque here.
	Figures []byte
	// Pace is the newest stride of the checkpoints the process knows
	// (internal/coord.PaceStep): from checkpoint PaceFrom on, every
	// PaceStride-th due checkpoint is taken; 0 and 0 if none. The leader
	// (process 0 until it leaves) decides it; every process passes on the
	// newest it knows.
	PaceFrom, PaceStride uint64
	// Reconfigs are the reconfigurations (internal/migrate's encoding,
	// opaque here) the process asked for last, announced to every peer
	// until they take force.
	Reconfigs [][]byte
	// Sizing is what the process's autoscaler shares (the figures it
	// froze at the newest policy epochs and the digests of its newest
	// rounds: internal/engine's encoding, opaque here).
	Sizing []byte
}

// Count is a named counter.
type Count struct {
	Name  string
	Value int64
}

const (
	magic      = 0x5753 // "WS"
	version    = 6
	maxCounts  = 256
	maxNameLen = 256
	maxFigures = 16 << 20
	// maxReconfigs bounds the reconfigurations of one message, and
	// maxReconfigBytes their total size.
	maxReconfigs     = 1 << 16
	maxReconfigBytes = 16 << 20
)

// Encode appends m's encoding to b.
func Encode(b []byte, m Message) []byte {
	b = binary.BigEndian.AppendUint16(b, magic)
	b = append(b, version)
	var flags byte
	if m.Final {
		flags |= 1
	}
	if m.Stop {
		flags |= 2
	}
	if m.Stopped {
		flags |= 4
	}
	if m.Ending {
		flags |= 8
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(m.Process))
	b = binary.AppendUvarint(b, m.Seq)
	b = binary.AppendUvarint(b, m.Complete)
	b = binary.AppendUvarint(b, m.Written)
	b = binary.AppendUvarint(b, m.StopAt)
	b = binary.AppendUvarint(b, m.PaceFrom)
	b = binary.AppendUvarint(b, m.PaceStride)
	b = binary.AppendUvarint(b, uint64(len(m.Counts)))
	for _, c := range m.Counts {
		b = binary.AppendUvarint(b, uint64(len(c.Name)))
		b = append(b, c.Name...)
		b = binary.AppendVarint(b, c.Value)
	}
	b = binary.AppendUvarint(b, uint64(len(m.Figures)))
	b = append(b, m.Figures...)
	b = binary.AppendUvarint(b, uint64(len(m.Reconfigs)))
	for _, r := range m.Reconfigs {
		b = binary.AppendUvarint(b, uint64(len(r)))
		b = append(b, r...)
	}
	b = binary.AppendUvarint(b, uint64(len(m.Sizing)))
	return append(b, m.Sizing...)
}

var errShort = errors.New("summary: message cut short")

// Decode decodes a message Encode made.
func Decode(b []byte) (Message, error) {
	var m Message
	if len(b) < 4 || binary.BigEndian.Uint16(b) != magic {
		return m, errors.New("summary: not a summary message")
	}
	if b[2] != version {
		return m, fmt.Errorf("summary: version %d, want %d", b[2], version)
	}
	if b[3]&^15 != 0 {
		return m, fmt.Errorf("summary: unknown flags %#x", b[3])
	}
	m.Final, m.Stop, m.Stopped, m.Ending = b[3]&1 != 0, b[3]&2 != 0, b[3]&4 != 0, b[3]&8 != 0
	b = b[4:]
	uv := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return v
	}
	p := uv()
	m.Seq = uv()
	m.Complete = uv()
	m.Written = uv()
	m.StopAt = uv()
	m.PaceFrom = uv()
	m.PaceStride = uv()
	n := uv()
	if b == nil {
		return Message{}, errShort
	}
	if p > 1<<16 {
		return Message{}, fmt.Errorf("summary: process %d out of range", p)
	}
	m.Process = int(p)
	if n > maxCounts {
		return Message{}, fmt.Errorf("summary: %d counters, at most %d", n, maxCounts)
	}
	for range n {
		l := uv()
		if b == nil || l > maxNameLen || l > uint64(len(b)) {
			return Message{}, errShort
		}
		name := string(b[:l])
		b = b[l:]
		v, k := binary.Varint(b)
		if k <= 0 {
			return Message{}, errShort
		}
		b = b[k:]
		m.Counts = append(m.Counts, Count{Name: name, Value: v})
	}
	l := uv()
	if b == nil || l > maxFigures || l > uint64(len(b)) {
		return Message{}, errShort
	}
	if l > 0 {
		// A copy: the receiver releases b to the transport's pool.
		m.Figures = append([]byte(nil), b[:l]...)
	}
	b = b[l:]
	nr := uv()
	if b == nil || nr > maxReconfigs || nr > uint64(len(b)) {
		return Message{}, errShort
	}
	total := 0
	for range nr {
		l := uv()
		if b == nil || l > uint64(len(b)) || total+int(l) > maxReconfigBytes {
			return Message{}, errShort
		}
		total += int(l)
		m.Reconfigs = append(m.Reconfigs, append([]byte(nil), b[:l]...))
		b = b[l:]
	}
	ls := uv()
	if b == nil || ls > maxFigures || ls > uint64(len(b)) {
		return Message{}, errShort
	}
	if ls > 0 {
		m.Sizing = append([]byte(nil), b[:ls]...)
	}
	b = b[ls:]
	if len(b) != 0 {
		return Message{}, fmt.Errorf("summary: %d bytes after the message", len(b))
	}
	if !slices.IsSortedFunc(m.Counts, func(a, b Count) int { return cmpName(a.Name, b.Name) }) {
		return Message{}, errors.New("summary: counters out of order")
	}
	return m, nil
}

func cmpName(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Counts turns a map of counters into the sorted list a message holds.
func Counts(m map[string]int64) []Count {
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{Name: k, Value: v})
	}
	slices.SortFunc(out, func(a, b Count) int { return cmpName(a.Name, b.Name) })
	return out
}
