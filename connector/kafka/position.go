package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/weirstream/weir/internal/bin"
)

// A position is the format byte posFormat, then the topic as a uvarint
// length and its bytes, the reader's instance and parallelism, and the
// partitions the reader owns: their number, then per partition in
// increasing order its number, the offset of the next record to read and,
// for a bounded source, one more than the offset it stops before (0 for
// an unbounded one), all uvarints.
const posFormat = 1

type partPos struct {
	part       int32
	next, stop int64
}

type position struct {
	topic     string
	inst, par int
	parts     []partPos
}

func (p position) encode() []byte {
	b := make([]byte, 1, 16+len(p.topic)+len(p.parts)*12)
	b[0] = posFormat
	b = binary.AppendUvarint(b, uint64(len(p.topic)))
	b = append(b, p.topic...)
	b = binary.AppendUvarint(b, uint64(p.inst))
	b = binary.AppendUvarint(b, uint64(p.par))
	b = binary.AppendUvarint(b, uint64(len(p.parts)))
	for _, pp := range p.parts {
		b = binary.AppendUvarint(b, uint64(pp.part))
		b = binary.AppendUvarint(b, uint64(pp.next))
		b = binary.AppendUvarint(b, uint64(pp.stop))
	}
	return b
}

func decodePosition(b []byte) (position, error) {
	var p position
	if len(b) == 0 {
		return p, errors.New("empty position")
	}
	if b[0] != posFormat {
		return p, fmt.Errorf("position format %d, want %d", b[0], posFormat)
	}
	d := bin.Decoder{B: b[1:]}
	p.topic = d.String()
	p.inst, p.par = int(d.Uvarint()), int(d.Uvarint())
	count := d.Int(int64(len(b)))
	for range count {
		pp := partPos{part: int32(d.Uvarint()), next: int64(d.Uvarint()), stop: int64(d.Uvarint())}
		if d.Err != nil {
			break
		}
		if k := len(p.parts); k > 0 && p.parts[k-1].part >= pp.part {
			return p, fmt.Errorf("position lists partition %d after %d", pp.part, p.parts[k-1].part)
		}
		p.parts = append(p.parts, pp)
	}
	switch {
	case d.Err != nil:
		return p, fmt.Errorf("position of %d bytes: %w", len(b), d.Err)
	case len(d.B) != 0:
		return p, fmt.Errorf("position has %d bytes too many", len(d.B))
	}
	return p, nil
}

// owns says whether instance inst of par reads partition part.
func owns(part int32, inst, par int) bool { return int(part)%par == inst }

// mergeSplits gathers, from the positions of every reader of an earlier
// run (in instance order), the partitions that instance inst of par now
// owns.
func mergeSplits(topic string, positions [][]byte, inst, par int) ([]partPos, error) {
	var out []partPos
	for j, b := range positions {
		p, err := decodePosition(b)
		if err != nil {
			return nil, fmt.Errorf("position %d of %d: %w", j, len(positions), err)
		}
		if p.topic != topic {
			return nil, fmt.Errorf("position %d of %d is of topic %s, not %s", j, len(positions), p.topic, topic)
		}
		if p.inst != j || p.par != len(positions) {
			return nil, fmt.Errorf("position %d of %d is of instance %d of %d", j, len(positions), p.inst, p.par)
		}
		for _, pp := range p.parts {
			if owns(pp.part, inst, par) {
				out = append(out, pp)
			}
		}
	}
	slices.SortFunc(out, func(a, b partPos) int { return int(a.part) - int(b.part) })
	for k := 1; k < len(out); k++ {
		if out[k].part == out[k-1].part {
			return nil, fmt.Errorf("partition %d is in two of the %d positions", out[k].part, len(positions))
		}
	}
	return out, nil
}
