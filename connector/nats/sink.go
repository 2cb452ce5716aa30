package nats

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	natsio "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir"
)

// SinkConfig says where a Sink publishes.
type SinkConfig struct {
	// URL is the server's address, nats://host:port.
	URL string
	// Stream is the JetStream stream the records go to.
	Stream string
	// Subject is the subject records are published on (default: Stream);
	// the stream must take it.
	Subject string
	// Create creates the stream, on Subject, if it is missing; otherwise
	// a missing stream is an error.
	Create bool
	// ID returns a record's message id (Nats-Msg-Id); the default is a
	// hash of its bytes. The server drops a message whose id it stored
	// within the stream's duplicate window, so that a job restarted from
	// a checkpoint publishes nothing twice.
	ID func(data []byte) string
}

// duplicateWindow is the duplicate window of a stream the sink creates.
const duplicateWindow = 2 * time.Minute

// ackWait bounds how long the sink waits for the server's acks, and
// for room among the messages awaiting one.
const ackWait = 30 * time.Second

// Sink returns an output that publishes each record, as encode appends
// it to dst, to a JetStream stream, with a message id for the server's
// deduplication. It waits for the server's acks at the end of each epoch
// and at Close, and fails with the first publication the server refused.
// It is safe for concurrent use.
func Sink[T any](cfg SinkConfig, encode func(v T, dst []byte) []byte) weir.Output[T] {
	if cfg.Subject == "" {
		cfg.Subject = cfg.Stream
	}
	if cfg.ID == nil {
		cfg.ID = hashID
	}
	s := &sink[T]{cfg: cfg, encode: encode}
	if cfg.Stream == "" {
		s.err = errors.New("nats: sink without a stream")
	} else {
		s.addr, s.err = checkURL(cfg.URL)
	}
	return s
}

// hashID is the default message id: a hash of the record's bytes.
func hashID(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:16])
}

type sink[T any] struct {
	cfg    SinkConfig
	encode func(T, []byte) []byte
	addr   string // the server's address, as errors name it

	mu  sync.Mutex
	nc  *natsio.Conn // nil until the first Write, and after Close
	js  jetstream.JetStream
	err error // sticky: the server cannot be used

	errMu  sync.Mutex
	ackErr error // the first publication refused since the last wait
}

// connect connects and checks the stream, creating it if asked.
func (s *sink[T]) connect() error {
	if s.err != nil || s.nc != nil {
		return s.err
	}
	nc, err := connect(s.cfg.URL, s.addr, "weir sink "+s.cfg.Stream)
	if err != nil {
		s.err = err
		return err
	}
	js, err := jetstream.New(nc,
		jetstream.WithPublishAsyncErrHandler(s.refused),
		jetstream.WithPublishAsyncTimeout(ackWait))
	if err == nil {
		err = s.stream(js)
	}
	if err != nil {
		nc.Close()
		s.err = err
		return err
	}
	s.nc, s.js = nc, js
	return nil
}

// stream checks that the stream exists, or creates it.
func (s *sink[T]) stream(js jetstream.JetStream) error {
	_, err := openStream(js, s.cfg.Stream, s.addr)
	if err == nil || !s.cfg.Create {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{
		Name:       s.cfg.Stream,
		Subjects:   []string{s.cfg.Subject},
		Duplicates: duplicateWindow,
	})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("nats: creating stream %s at %s: %w", s.cfg.Stream, s.addr, err)
	}
	return nil
}

// refused records a publication the server refused (or did not ack in
// time). The client calls it from its own goroutines.
func (s *sink[T]) refused(_ jetstream.JetStream, m *natsio.Msg, err error) {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	if s.ackErr == nil {
		s.ackErr = fmt.Errorf("nats: publishing to stream %s at %s (subject %s, message id %s): %w",
			s.cfg.Stream, s.addr, m.Subject, m.Header.Get(natsio.MsgIdHdr), err)
	}
}

// failed returns the first refused publication since the last call.
func (s *sink[T]) failed() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	err := s.ackErr
	s.ackErr = nil
	return err
}

// Write implements weir.Output: it publishes the records without
// waiting for their acks (but for room among the messages awaiting one).
func (s *sink[T]) Write(batch []T) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.connect(); err != nil {
		return err
	}
	if err := s.failed(); err != nil {
		return err
	}
	// The client keeps each message until its ack: the payloads are
	// never overwritten.
	buf := make([]byte, 0, 64*len(batch))
	for _, v := range batch {
		start := len(buf)
		buf = s.encode(v, buf)
		data := buf[start:len(buf):len(buf)]
		m := &natsio.Msg{Subject: s.cfg.Subject, Data: data}
		_, err := s.js.PublishMsgAsync(m, jetstream.WithMsgID(s.cfg.ID(data)), jetstream.WithStallWait(ackWait))
		if err != nil {
			return fmt.Errorf("nats: publishing to stream %s at %s: %w", s.cfg.Stream, s.addr, err)
		}
	}
	return nil
}

// wait waits for the acks of everything published, and returns the
// first refusal.
func (s *sink[T]) wait() error {
	if s.nc == nil {
		return s.err
	}
	select {
	case <-s.js.PublishAsyncComplete():
	case <-time.After(ackWait + time.Second):
		return fmt.Errorf("nats: stream %s at %s: %d messages not acked within %v", s.cfg.Stream, s.addr, s.js.PublishAsyncPending(), ackWait)
	}
	return s.failed()
}

// EndEpoch implements weir.EpochSink: the epoch's records are stored (or
// known duplicates) when it returns nil.
func (s *sink[T]) EndEpoch(uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wait()
}

// Close implements weir.Output: it waits for the acks and closes the
// connection. With several instances, the first to close closes it, and
// the others' later Writes connect again.
func (s *sink[T]) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.wait()
	if s.nc != nil {
		s.nc.Close()
		s.nc, s.js = nil, nil
	}
	return err
}
