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
// there.
const consumerCheck = 5 * time.Second

var ackBody = []byte("+ACK")

// acks is what a reader that reads through a durable consumer has to
// acknowledge: for each message (explicit acks, on a work-queue stream)
// or each position asked for (AckAll, where the last message before a
// position acknowledges everything before it), the reply subject to
// acknowledge it on, acknowledged by a position at or after below.
// Acknowledge runs on another goroutine than Read, so acks has a lock of
// its own. The reply subjects name the reader's consumer, which no other
// reader reads through.
type acks struct {
	mu       sync.Mutex
	nc       *natsio.Conn // the reader's connection; nil once it closed
	url      string
	addr     string
	stream   string
	base     string // the consumers' names but for the reader's token
	name     string // the consumer's, once made
	explicit bool
	pending  []pendingAck // in increasing below, but for messages delivered again
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
func (a *acks) started(name string) {
	a.mu.Lock()
	a.name, a.pending = name, nil
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
	nc, name := a.nc, a.name
	a.mu.Unlock()
	if len(due) == 0 {
		return nil
	}
	if !a.explicit {
		due = due[len(due)-1:] // the newest covers the rest
	}
	err := a.send(nc, name, due)
	if nc != nil && errors.Is(err, natsio.ErrConnectionClosed) {
		err = a.send(nil, name, due) // the reader closed meanwhile
	}
	return err
}

// send publishes the acknowledgements on nc (on a connection of its own
// if nil), the last as a request whose answer says the server took them
// all. If that fails because a later reader deleted the consumer, the
// acknowledgements are moot: the later reader acknowledges what they
// covered.
func (a *acks) send(nc *natsio.Conn, name string, replies []string) error {
	if nc == nil {
		c, err := connect(a.url, a.addr, "weir source acks")
		if err != nil {
			return err
		}
		defer c.Close()
		nc = c
	}
	ctx, cancel := context.WithTimeout(context.Background(), ackTimeout)
	defer cancel()
	last := len(replies) - 1
	var err error
	for _, r := range replies[:last] {
		if err = nc.Publish(r, ackBody); err != nil {
			break
		}
	}
	if err == nil {
		_, err = nc.RequestWithContext(ctx, replies[last], ackBody)
	}
	if err == nil {
		return nil
	}
	if js, jerr := jetstream.New(nc); jerr == nil {
		if _, cerr := js.Consumer(ctx, a.stream, name); errors.Is(cerr, jetstream.ErrConsumerNotFound) {
			return a.replaced(name)
		}
	}
	return fmt.Errorf("nats: stream %s: acknowledging %d messages on consumer %s: %w", a.stream, len(replies), name, err)
}

// replaced says what to do when the reader's consumer is gone: nothing
// if the reader closed (a later reader replaced it), an error if it
// reads on.
func (a *acks) replaced(name string) error {
	a.mu.Lock()
	open := a.nc != nil
	a.mu.Unlock()
	if !open {
		return nil
	}
	return errReplaced(a.stream, name)
}

func errReplaced(stream, name string) error {
	return fmt.Errorf("nats: stream %s: consumer %s was deleted, by another reader of its source or by hand (two runs of one job at once, or two sources given one Consumer, replace each other's consumers: run one, or give each source its own SourceConfig.Consumer, ?consumer= on the command line)", stream, name)
}

// consumerBase is what the names of a source's consumers start with:
// SourceConfig.Consumer, or weir-JOB-SOURCE (weir-STREAM for a source
// opened outside a job), to which each reader adds a token of its own.
func (s *source[T]) consumerBase() string {
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

// ofBase says whether name is base and a reader's token (a NUID).
func ofBase(name, base string) bool {
	tok, ok := strings.CutPrefix(name, base+"-")
	if !ok || len(tok) != 22 {
		return false
	}
	for _, c := range tok {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// checkConsumer fails the reader if its consumer is gone (another reader
// of the source started and deleted it): it looks at most every
// consumerCheck, and when the reader has read to its end (force), so that
// a reader whose consumer went does not end as if it had read it all.
// (Other errors pass: the next look tries again.)
func (r *reader[T]) checkConsumer(force bool) error {
	if r.cons == nil || !force && time.Since(r.consChecked) < consumerCheck {
		return nil
	}
	r.consChecked = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	if _, err := r.cons.Info(ctx); errors.Is(err, jetstream.ErrConsumerNotFound) {
		return errReplaced(r.stream, r.acks.name)
	}
	return nil
}

// startDurable makes a durable consumer of the reader's own (the source's
// base name and a token) that delivers from r.next (from the stream's
// first message on a work-queue stream, which takes no other start; what
// comes before r.next is skipped and acknowledged), and deletes the ones
// earlier readers of the source made. On a work-queue stream, whose
// consumers may not overlap, those go first (the stream keeps the
// messages); otherwise the new one comes first, so that an interest
// stream keeps the messages, and there it starts at the old ones' first
// message not acknowledged, if earlier, to acknowledge those too.
func (r *reader[T]) startDurable(ctx context.Context) (jetstream.Consumer, error) {
	c := r.src.cfg
	old, floor, err := r.oldConsumers(ctx)
	if err != nil {
		return nil, err
	}
	cfg := jetstream.ConsumerConfig{
		Durable:       r.acks.base + "-" + nuid.Next(),
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
		if c.MaxPending > 0 {
			cfg.MaxAckPending = c.MaxPending
		}
		if err := r.deleteConsumers(ctx, old); err != nil {
			return nil, err
		}
		old = nil
	case jetstream.InterestPolicy:
		if floor > 0 && floor < r.next {
			cfg.OptStartSeq = floor
		}
	}
	cons, err := r.js.CreateConsumer(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := r.deleteConsumers(ctx, old); err != nil {
		return nil, err // the next start deletes the new one too
	}
	return cons, nil
}

// oldConsumers returns the consumers earlier readers of the source made,
// and the first message not acknowledged by all of them (0: none).
func (r *reader[T]) oldConsumers(ctx context.Context) ([]string, uint64, error) {
	var old []string
	var floor uint64
	names := r.js.ConsumerNames(ctx)
	for name := range names.Name() {
		if ofBase(name, r.acks.base) {
			old = append(old, name)
		}
	}
	if err := names.Err(); err != nil {
		return nil, 0, fmt.Errorf("listing the consumers: %w", err)
	}
	for _, name := range old {
		c, err := r.js.Consumer(ctx, name)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("consumer %s: %w", name, err)
		}
		if f := c.CachedInfo().AckFloor.Stream + 1; floor == 0 || f < floor {
			floor = f
		}
	}
	return old, floor, nil
}

// deleteConsumers deletes the consumers names (once each).
func (r *reader[T]) deleteConsumers(ctx context.Context, names []string) error {
	for _, n := range names {
		if err := r.js.DeleteConsumer(ctx, n); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return fmt.Errorf("deleting consumer %s, an earlier reader's: %w", n, err)
		}
	}
	return nil
}
