package nats

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	natsio "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir/connector/file"
)

// reader reads the stream for instance 0; for the other instances
// (idle) it reads nothing.
type reader[T any] struct {
	src    *source[T]
	stream string
	idle   bool
	nc     *natsio.Conn
	js     jetstream.Stream
	iter   jetstream.MessagesContext // nil until the first Read

	next    uint64   // the stream sequence to read from
	prev    uint64   // next before the last Read
	after   []uint64 // after[i]: next after record i of the last batch
	out     []T
	bounded bool
	bound   uint64    // if bounded, the last sequence to read
	done    bool      // a message beyond the bound came
	checked time.Time // when an idle bounded reader last looked at the stream
	waited  time.Duration
	backlog int64
	err     error // sticky

	retention jetstream.RetentionPolicy
	// acks, if not nil, is what the reader acknowledges on its durable
	// consumer: the messages it took (explicit acks: took holds those of
	// the last Read until it ends) or, with AckAll, a position's last
	// message before it: lastReply is the last message taken, prevReply
	// the last before the last Read, replies[i] the last by record i.
	acks                 *acks
	cons                 jetstream.Consumer // the durable consumer, once made
	consChecked          time.Time          // when checkConsumer last looked
	took                 []pendingAck
	lastReply, prevReply string
	replies              []string
}

// ended says the reader has read everything it should.
func (r *reader[T]) ended() bool {
	return r.idle || r.done || r.bounded && r.next > r.bound
}

// Read implements weir.Reader: the messages that came, at most batchSize,
// after waiting at most a few milliseconds for the first.
func (r *reader[T]) Read() ([]T, error) {
	r.out, r.after, r.prev = r.out[:0], r.after[:0], r.next
	r.replies, r.prevReply = r.replies[:0], r.lastReply
	if r.acks != nil {
		defer r.noteTaken()
	}
	switch {
	case r.err != nil:
		return nil, r.err
	case r.ended():
		return nil, io.EOF
	case r.iter == nil:
		if r.err = r.start(); r.err != nil {
			return nil, r.err
		}
	}
	deadline := time.Now().Add(readWait)
	for len(r.out) < batchSize && !r.ended() {
		wait := time.Until(deadline)
		if wait <= 0 {
			break
		}
		t0 := time.Now()
		msg, err := r.iter.Next(jetstream.NextMaxWait(wait))
		if errors.Is(err, natsio.ErrTimeout) {
			r.waited += time.Since(t0)
			break
		}
		switch {
		case err == nil:
			err = r.take(msg)
		case r.acks != nil && errors.Is(err, jetstream.ErrConsumerDeleted):
			err = errReplaced(r.stream, r.acks.name)
		default:
			err = fmt.Errorf("nats: stream %s: reading from sequence %d: %w", r.stream, r.next, err)
		}
		if err != nil {
			r.err = err
			return nil, err
		}
	}
	if err := r.checkConsumer(r.ended()); err != nil {
		r.err = err
		return nil, err
	}
	if r.ended() && r.iter != nil {
		// Done: the consumer stops delivering to this reader (a later
		// one may read through it).
		r.iter.Stop()
		r.iter = nil
	}
	if len(r.out) == 0 {
		if r.ended() {
			return nil, io.EOF
		}
		if err := r.recheck(); err != nil {
			r.err = err
			return nil, err
		}
	}
	return r.out, nil
}

// take decodes a message into the batch, or sends it to the dead
// letters.
func (r *reader[T]) take(msg jetstream.Msg) error {
	meta, err := msg.Metadata()
	if err != nil {
		return fmt.Errorf("nats: stream %s after sequence %d: %w", r.stream, r.next-1, err)
	}
	seq := meta.Sequence.Stream
	if r.bounded && seq > r.bound {
		r.done = true
		return nil
	}
	if r.acks != nil {
		if r.acks.explicit {
			r.took = append(r.took, pendingAck{below: seq + 1, reply: msg.Reply()})
		}
		r.lastReply = msg.Reply()
	}
	r.backlog = int64(meta.NumPending)
	if seq < r.next {
		// Read before the position, or delivered again: only to
		// acknowledge.
		return nil
	}
	r.next = seq + 1
	v, err := r.src.decode(msg.Data())
	if err == nil {
		r.out = append(r.out, v)
		r.after = append(r.after, r.next)
		if r.acks != nil && !r.acks.explicit {
			r.replies = append(r.replies, r.lastReply)
		}
		return nil
	}
	dl := r.src.cfg.DeadLetter
	if dl == nil {
		return fmt.Errorf("nats: stream %s sequence %d (subject %s): %w", r.stream, seq, msg.Subject(), err)
	}
	l := file.Letter{Source: r.src.name, Split: r.stream, Offset: int64(seq), Reason: err.Error(), Record: string(msg.Data())}
	if err := dl.Add(l); err != nil {
		return fmt.Errorf("nats: stream %s sequence %d: %w", r.stream, seq, err)
	}
	return nil
}

// recheck, at most once a second while a bounded reader gets nothing,
// ends it if no message it should read is left: the messages up to the
// bound were deleted, say.
func (r *reader[T]) recheck() error {
	if !r.bounded || time.Since(r.checked) < time.Second {
		return nil
	}
	r.checked = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	subject := r.src.cfg.Subject
	if subject == "" {
		subject = ">"
	}
	m, err := r.js.GetMsg(ctx, r.next, jetstream.WithGetMsgSubject(subject))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		r.done = true
	case err != nil:
		return fmt.Errorf("nats: stream %s: looking for a message from sequence %d: %w", r.stream, r.next, err)
	case m.Sequence > r.bound:
		r.done = true
	}
	return nil
}

// noteTaken hands the messages the last Read took (explicit acks) to
// the acknowledgements.
func (r *reader[T]) noteTaken() {
	if len(r.took) > 0 {
		r.acks.add(r.took...)
		clear(r.took)
		r.took = r.took[:0]
	}
}

// Acknowledge implements weir.Acknowledged: on a durable consumer, the
// messages before pos are acknowledged (on a work-queue stream the
// server then deletes them); on an ordered consumer, nothing is.
func (r *reader[T]) Acknowledge(pos []byte) error {
	p, err := r.check(pos)
	if err != nil || r.acks == nil || p.format != posReading {
		return err
	}
	return r.acks.ack(p.next)
}

// Close implements weir.Reader.
func (r *reader[T]) Close() error {
	if r.iter != nil {
		r.iter.Stop()
		r.iter = nil
	}
	if r.acks != nil {
		r.acks.close()
	}
	if r.nc != nil {
		r.nc.Close()
		r.nc = nil
	}
	if r.err == nil {
		r.err = io.EOF
	}
	return nil
}

// Waited implements weir.Waiter: the time Read spent waiting for
// messages that did not come.
func (r *reader[T]) Waited() time.Duration { return r.waited }

// Backlog implements weir.Backlogged: the messages the stream holds
// after the last one read, on the subject filter and up to the bound (as
// the server counted when it sent that message).
func (r *reader[T]) Backlog() int64 {
	switch {
	case r.ended():
		return 0
	case r.bounded:
		return min(r.backlog, int64(r.bound+1-r.next))
	}
	return r.backlog
}
