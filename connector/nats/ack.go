package nats

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	natsio "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// redeliverAfter is how long the server waits for a delivered message's
// acknowledgement before it delivers the message again: longer than
// checkpoints take to complete (a message delivered again is skipped).
const redeliverAfter = 30 * time.Minute

// defaultMaxPending is how many messages a work-queue stream's consumer
// holds delivered and not acknowledged by default.
const defaultMaxPending = 200_000

// ackTimeout bounds the wait for the server to confirm acknowledgements.
const ackTimeout = 5 * time.Second

var ackBody = []byte("+ACK")

// acks is what a reader that reads through a durable consumer has to
// acknowledge: for each message (explicit acks, on a work-queue stream)
// or each position asked for (AckAll, where the last message before a
// position acknowledges everything before it), the reply subject to
// acknowledge it on, acknowledged by a position at or after below.
// Acknowledge runs on another goroutine than Read, so acks has a lock of
// its own.
type acks struct {
	mu       sync.Mutex
	nc       *natsio.Conn // the reader's connection; nil once it closed
	url      string
	addr     string
	explicit bool
	pending  []pendingAck // in increasing below, but for messages delivered again
	// gen counts the consumers the source's readers made in this process,
	// mine is the one the reply subjects are of: once a later reader has
	// replaced it, its replies would acknowledge on the new one, so they
	// are dropped (the new reader acknowledges what they covered).
	gen  *atomic.Uint64
	mine uint64
}

type pendingAck struct {
	below uint64
	reply string
}

// maxMarks bounds the positions an AckAll reader keeps: the newest
// acknowledges what the older ones would have.
const maxMarks = 1024

// add notes messages or positions to acknowledge.
func (a *acks) add(p ...pendingAck) {
	a.mu.Lock()
	a.pending = append(a.pending, p...)
	if !a.explicit && len(a.pending) > maxMarks {
		a.pending = append(a.pending[:0], a.pending[len(a.pending)-maxMarks:]...)
	}
	a.mu.Unlock()
}

// close forgets the reader's connection, which it closes.
func (a *acks) close() {
	a.mu.Lock()
	a.nc = nil
	a.mu.Unlock()
}

// ack acknowledges the messages before sequence next.
func (a *acks) ack(next uint64) error {
	a.mu.Lock()
	var due []string
	kept := a.pending[:0]
	for _, p := range a.pending {
		if p.below <= next {
			due = append(due, p.reply)
		} else {
			kept = append(kept, p)
		}
	}
	clear(a.pending[len(kept):])
	a.pending = kept
	nc := a.nc
	mine := a.mine
	a.mu.Unlock()
	if len(due) == 0 || a.gen.Load() != mine {
		return nil
	}
	if !a.explicit {
		due = due[len(due)-1:] // the newest covers the rest
	}
	err := a.send(nc, due)
	if nc != nil && errors.Is(err, natsio.ErrConnectionClosed) {
		err = a.send(nil, due) // the reader closed meanwhile
	}
	return err
}

// send publishes the acknowledgements on nc (on a connection of its own
// if nil), the last as a request whose answer says the server took them
// all.
func (a *acks) send(nc *natsio.Conn, replies []string) error {
	if nc == nil {
		c, err := connect(a.url, a.addr, "weir source acks")
		if err != nil {
			return err
		}
		defer c.Close()
		nc = c
	}
	last := len(replies) - 1
	for _, r := range replies[:last] {
		if err := nc.Publish(r, ackBody); err != nil {
			return fmt.Errorf("nats: acknowledging: %w", err)
		}
	}
	if _, err := nc.Request(replies[last], ackBody, ackTimeout); err != nil {
		return fmt.Errorf("nats: acknowledging %d messages: %w", len(replies), err)
	}
	return nil
}

// consumerName is the durable consumer a source reads through.
func (c SourceConfig) consumerName() string {
	if c.Consumer != "" {
		return c.Consumer
	}
	name := "weir-" + c.Stream
	if c.Subject != "" {
		name += "-" + strings.Map(func(r rune) rune {
			switch r {
			case '.', '*', '>', ' ', '\t':
				return '_'
			}
			return r
		}, c.Subject)
	}
	return name
}

// startDurable makes the durable consumer deliver from r.next (from the
// stream's first message on a work-queue stream, which takes no other
// start; what comes before r.next is skipped and acknowledged), replacing
// the one of that name that an earlier reader left. On an interest
// stream a bridge consumer holds the messages while the consumer is
// replaced, and the new one starts at the old one's first message not
// acknowledged, if earlier, so that those are acknowledged too.
func (r *reader[T]) startDurable(ctx context.Context) (jetstream.Consumer, error) {
	c := r.src.cfg
	name := c.consumerName()
	cfg := jetstream.ConsumerConfig{
		Durable:       name,
		Description:   "weir source: acknowledged as the job's checkpoints complete",
		AckPolicy:     jetstream.AckAllPolicy,
		AckWait:       redeliverAfter,
		MaxAckPending: -1,
		MaxDeliver:    -1,
		FilterSubject: c.Subject,
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   r.next,
	}
	switch r.retention {
	case jetstream.WorkQueuePolicy:
		cfg.AckPolicy, cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.AckExplicitPolicy, jetstream.DeliverAllPolicy, 0
		cfg.MaxAckPending = c.MaxPending
		if cfg.MaxAckPending <= 0 {
			cfg.MaxAckPending = defaultMaxPending
		}
	case jetstream.InterestPolicy:
		old, err := r.js.Consumer(ctx, name)
		if err == nil {
			if floor := old.CachedInfo().AckFloor.Stream; floor+1 < r.next {
				cfg.OptStartSeq = floor + 1
			}
			bridge := cfg
			bridge.Durable, bridge.Description = name+"-bridge", "weir source: holds the messages while "+name+" is replaced"
			bridge.InactiveThreshold = time.Minute
			if _, err := r.js.CreateOrUpdateConsumer(ctx, bridge); err != nil {
				return nil, err
			}
			defer r.js.DeleteConsumer(ctx, bridge.Durable)
		}
	}
	if err := r.js.DeleteConsumer(ctx, name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, err
	}
	return r.js.CreateConsumer(ctx, cfg)
}
