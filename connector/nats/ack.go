package nats

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"

	natsio "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// redeliverAfter is how long the server waits for a delivered message's
// acknowledgement before it delivers the message again: longer than
// checkpoints take to complete (a message delivered again is skipped).
const redeliverAfter = 30 * time.Minute

// ackTimeout bounds the requests an acknowledgement makes.
const ackTimeout = 2 * time.Second

// consumerCheck is how often a reader checks that its consumer is still
// the one it made.
const consumerCheck = 5 * time.Second

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
	stream   string
	name     string // the consumer's
	explicit bool
	// desc is the description, unique to its reader, of the consumer
	// whose reply subjects pending holds: once another reader has
	// replaced it (or made it its own), they would acknowledge on the
	// new one, so they are dropped.
	desc    string
	pending []pendingAck // in increasing below, but for messages delivered again
}

type pendingAck struct {
	below uint64
	reply string
}

// add notes messages or positions to acknowledge.
func (a *acks) add(p ...pendingAck) {
	a.mu.Lock()
	if n := len(a.pending); len(p) == 1 && n > 0 && !a.explicit && a.pending[n-1].below == p[0].below {
		a.pending[n-1] = p[0] // the same position again
	} else {
		a.pending = append(a.pending, p...)
	}
	a.mu.Unlock()
}

// started notes the consumer the reader now reads through.
func (a *acks) started(desc string) {
	a.mu.Lock()
	a.desc, a.pending = desc, nil
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
	nc, desc := a.nc, a.desc
	a.mu.Unlock()
	if len(due) == 0 {
		return nil
	}
	if !a.explicit {
		due = due[len(due)-1:] // the newest covers the rest
	}
	err := a.send(nc, desc, due)
	if nc != nil && errors.Is(err, natsio.ErrConnectionClosed) {
		err = a.send(nil, desc, due) // the reader closed meanwhile
	}
	return err
}

// send publishes the acknowledgements on nc (on a connection of its own
// if nil), if the consumer is still the one of description desc, the
// last as a request whose answer says the server took them all.
func (a *acks) send(nc *natsio.Conn, desc string, replies []string) error {
	if nc == nil {
		c, err := connect(a.url, a.addr, "weir source acks")
		if err != nil {
			return err
		}
		defer c.Close()
		nc = c
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), ackTimeout)
	defer cancel()
	cons, err := js.Consumer(ctx, a.stream, a.name)
	switch {
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		return a.replaced()
	case err != nil:
		return fmt.Errorf("nats: stream %s: consumer %s: %w", a.stream, a.name, err)
	case cons.CachedInfo().Config.Description != desc:
		return a.replaced()
	}
	last := len(replies) - 1
	for _, r := range replies[:last] {
		if err := nc.Publish(r, ackBody); err != nil {
			return fmt.Errorf("nats: acknowledging: %w", err)
		}
	}
	if _, err := nc.RequestWithContext(ctx, replies[last], ackBody); err != nil {
		return fmt.Errorf("nats: acknowledging %d messages: %w", len(replies), err)
	}
	return nil
}

// replaced says what to do when the consumer is not the reader's any
// more: nothing if the reader closed (a later reader replaced it, and
// acknowledges what these replies covered), an error if it reads on.
func (a *acks) replaced() error {
	a.mu.Lock()
	open := a.nc != nil
	a.mu.Unlock()
	if !open {
		return nil
	}
	return errReplaced(a.stream, a.name)
}

func errReplaced(stream, name string) error {
	return fmt.Errorf("nats: stream %s: consumer %s was replaced or deleted by another reader: two sources, or two runs of a job, read through it; give each its own SourceConfig.Consumer (?consumer= on the command line)", stream, name)
}

// consumerName is the durable consumer a source reads through:
// SourceConfig.Consumer, or weir-JOB-SOURCE (weir-STREAM for a source
// opened outside a job).
func (s *source[T]) consumerName() string {
	if s.cfg.Consumer != "" {
		return s.cfg.Consumer
	}
	if s.job == "" {
		return "weir-" + s.cfg.Stream
	}
	return "weir-" + strings.Map(func(r rune) rune {
		switch {
		case r == '.' || r == '*' || r == '>' || r == '/' || r == '\\' || unicode.IsSpace(r) || !unicode.IsPrint(r):
			return '_'
		}
		return r
	}, s.job+"-"+s.name)
}

// checkConsumer fails the reader if its consumer is no longer the one
// it made: at most every consumerCheck, and when it has read to its end
// (force), so that a reader whose messages another took does not end as
// if it had read them all.
func (r *reader[T]) checkConsumer(force bool) error {
	if r.cons == nil || !force && time.Since(r.consChecked) < consumerCheck {
		return nil
	}
	r.consChecked = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	info, err := r.cons.Info(ctx)
	switch {
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		return errReplaced(r.stream, r.acks.name)
	case err != nil:
		return fmt.Errorf("nats: stream %s: consumer %s: %w", r.stream, r.acks.name, err)
	case info.Config.Description != r.acks.desc:
		return errReplaced(r.stream, r.acks.name)
	}
	return nil
}

// startDurable makes the durable consumer deliver from r.next (from the
// stream's first message on a work-queue stream, which takes no other
// start; what comes before r.next is skipped and acknowledged), replacing
// the one of that name that an earlier reader left. On an interest
// stream, whose messages go once no consumer wants them, a bridge
// consumer holds them while the consumer is replaced, and the new one
// starts at the old one's first message not acknowledged, if earlier, so
// that those are acknowledged too.
func (r *reader[T]) startDurable(ctx context.Context) (jetstream.Consumer, error) {
	c := r.src.cfg
	name := r.acks.name
	cfg := jetstream.ConsumerConfig{
		Durable:       name,
		Description:   "weir source " + nuid.Next() + ": acknowledged as the job's checkpoints complete",
		AckPolicy:     jetstream.AckAllPolicy,
		AckWait:       redeliverAfter,
		MaxAckPending: -1,
		MaxDeliver:    -1,
		FilterSubject: c.Subject,
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   r.next,
	}
	var bridge string
	switch r.retention {
	case jetstream.WorkQueuePolicy:
		cfg.AckPolicy, cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.AckExplicitPolicy, jetstream.DeliverAllPolicy, 0
		if c.MaxPending > 0 {
			cfg.MaxAckPending = c.MaxPending
		}
	case jetstream.InterestPolicy:
		if old, err := r.js.Consumer(ctx, name); err == nil {
			if floor := old.CachedInfo().AckFloor.Stream; floor+1 < r.next {
				cfg.OptStartSeq = floor + 1
			}
		}
		bridge = name + "-bridge"
		if err := r.holdBridge(ctx, cfg, bridge); err != nil {
			return nil, err
		}
	}
	if err := r.js.DeleteConsumer(ctx, name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, err
	}
	cons, err := r.js.CreateConsumer(ctx, cfg)
	switch {
	case errors.Is(err, jetstream.ErrConsumerExists) || errors.Is(err, jetstream.ErrConsumerNameAlreadyInUse):
		// Another reader made it meanwhile (its description differs).
		return nil, errReplaced(r.stream, name)
	case err == nil && cons.CachedInfo().Config.Description != cfg.Description:
		return nil, errReplaced(r.stream, name)
	case err != nil:
		return nil, err // a bridge stays, holding the messages
	}
	if bridge != "" {
		if err := r.js.DeleteConsumer(ctx, bridge); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return nil, fmt.Errorf("deleting the bridge consumer %s: %w", bridge, err)
		}
	}
	return cons, nil
}

// holdBridge makes the bridge consumer, unless one is left from a start
// that did not finish (it then holds the messages from where it did).
func (r *reader[T]) holdBridge(ctx context.Context, cfg jetstream.ConsumerConfig, bridge string) error {
	if _, err := r.js.Consumer(ctx, bridge); err == nil {
		return nil
	}
	cfg.Durable, cfg.Description = bridge, "weir source: holds the messages while "+cfg.Durable+" is replaced"
	if _, err := r.js.CreateConsumer(ctx, cfg); err != nil {
		return fmt.Errorf("making the bridge consumer %s: %w", bridge, err)
	}
	return nil
}
