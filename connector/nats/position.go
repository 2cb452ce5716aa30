package nats

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/weirstream/weir/internal/bin"
)

// The first byte of a position says its format. Format 1, the reading
// instance's, is followed by the stream's name (a uvarint length and its
// bytes) and a uvarint, the stream sequence to read from. Format 2, an
// instance that reads nothing, is followed by the stream's name only.
const (
	posReading = 1
	posIdle    = 2
)

// position is a decoded position.
type position struct {
	format byte
	stream string
	next   uint64
}

func (p position) encode() []byte {
	b := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(p.stream))
	b = append(b, p.format)
	b = binary.AppendUvarint(b, uint64(len(p.stream)))
	b = append(b, p.stream...)
	if p.format == posReading {
		b = binary.AppendUvarint(b, p.next)
	}
	return b
}

func decodePosition(pos []byte) (position, error) {
	var p position
	if len(pos) == 0 {
		return p, errors.New("empty position")
	}
	p.format = pos[0]
	if p.format != posReading && p.format != posIdle {
		return p, fmt.Errorf("position format %d, want %d or %d", p.format, posReading, posIdle)
	}
	d := bin.Decoder{B: pos[1:]}
	p.stream = d.String()
	if p.format == posReading {
		p.next = d.Uvarint()
		if d.Err == nil && p.next == 0 {
			return p, errors.New("position at sequence 0")
		}
	}
	switch {
	case d.Err != nil:
		return p, fmt.Errorf("position of %d bytes is truncated or corrupt", len(pos))
	case len(d.B) != 0:
		return p, fmt.Errorf("position has %d bytes too many", len(d.B))
	}
	return p, nil
}

// Position implements weir.Seekable: the sequence after the first used
// records of the last batch (after all the messages the last Read took,
// rejected ones included, if used is the batch's length). It syncs the
// dead letters, so that a checkpoint never covers a letter that is lost.
func (r *reader[T]) Position(used int) ([]byte, error) {
	if r.idle {
		if used != 0 {
			return nil, fmt.Errorf("nats: stream %s: Position(%d) on an instance that reads nothing", r.stream, used)
		}
		return position{format: posIdle, stream: r.stream}.encode(), nil
	}
	var next uint64
	switch {
	case used < 0 || used > len(r.after):
		return nil, fmt.Errorf("nats: stream %s: Position(%d) after a batch of %d records", r.stream, used, len(r.after))
	case used == len(r.after):
		next = r.next
	case used == 0:
		next = r.prev
	default:
		next = r.after[used-1]
	}
	if r.acks != nil && !r.acks.explicit {
		// With AckAll, the last message before the position
		// acknowledges everything before it.
		reply := r.lastReply
		switch {
		case used == 0:
			reply = r.prevReply
		case used < len(r.after):
			reply = r.replies[used-1]
		}
		if reply != "" {
			r.acks.add(pendingAck{below: next, reply: reply})
		}
	}
	if dl := r.src.cfg.DeadLetter; dl != nil {
		if err := dl.Sync(); err != nil {
			return nil, fmt.Errorf("nats: stream %s: %w", r.stream, err)
		}
	}
	return position{format: posReading, stream: r.stream, next: next}.encode(), nil
}

// check decodes a position and refuses one of another stream.
func (r *reader[T]) check(pos []byte) (position, error) {
	p, err := decodePosition(pos)
	if err != nil {
		return p, fmt.Errorf("nats: stream %s: %w", r.stream, err)
	}
	if p.stream != r.stream {
		return p, fmt.Errorf("nats: a position in stream %s, for a source of stream %s", p.stream, r.stream)
	}
	return p, nil
}

// Seek implements weir.Seekable.
func (r *reader[T]) Seek(pos []byte) error {
	p, err := r.check(pos)
	switch {
	case err != nil:
		return err
	case r.idle && p.format != posIdle:
		return fmt.Errorf("nats: stream %s: the reading instance's position, on an instance that reads nothing", r.stream)
	case !r.idle && p.format != posReading:
		return fmt.Errorf("nats: stream %s: the position of an instance that read nothing, on the reading instance 0", r.stream)
	}
	if !r.idle {
		r.resume(p.next)
	}
	return nil
}

// SeekSplits implements weir.Rescalable: the reading instance resumes at
// the old reading instance's position (the first); the others read
// nothing, as before.
func (r *reader[T]) SeekSplits(positions [][]byte) error {
	if len(positions) == 0 {
		return fmt.Errorf("nats: stream %s: SeekSplits without positions", r.stream)
	}
	var next uint64
	for i, pos := range positions {
		p, err := r.check(pos)
		if err != nil {
			return fmt.Errorf("%w (position %d of %d)", err, i, len(positions))
		}
		switch {
		case i == 0 && p.format != posReading:
			return fmt.Errorf("nats: stream %s: position 0 of %d is not the reading instance's", r.stream, len(positions))
		case i > 0 && p.format != posIdle:
			return fmt.Errorf("nats: stream %s: position %d of %d is a reading instance's, only instance 0 reads", r.stream, i, len(positions))
		}
		if i == 0 {
			next = p.next
		}
	}
	if !r.idle {
		r.resume(next)
	}
	return nil
}

// resume makes the next Read start at sequence next, on a new consumer.
func (r *reader[T]) resume(next uint64) {
	if r.iter != nil {
		r.iter.Stop()
		r.iter = nil
	}
	r.next, r.prev, r.after, r.out, r.done = next, next, r.after[:0], r.out[:0], false
	r.backlog = 0
	r.lastReply, r.prevReply, r.replies = "", "", r.replies[:0]
}
