package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weirstream/weir"
)

// SinkConfig is a sink into one topic.
type SinkConfig struct {
	Config
	Topic string
	// Create makes the topic, with Partitions partitions (default 1) and
	// Replication replicas (default 1), if it does not exist; without it
	// a missing topic is an error.
	Create      bool
	Partitions  int32
	Replication int16
	// AtLeastOnce writes without transactions: what a job restored from a
	// checkpoint writes again appears twice.
	AtLeastOnce bool
	// TransactionalID is the prefix of the transactional ids the sink
	// writes with (default "weir-" + Topic): ids prefix-0, prefix-1,
	// prefix-2 and more while checkpoints complete late. Two sinks, or two jobs, that write at once need two
	// prefixes; a job restarted with the same prefix fences the writers
	// of its previous run.
	TransactionalID string
	// TransactionTimeout is how long the brokers keep a transaction open
	// (default 10 min): a job must restart from its checkpoint within it,
	// or the records of the checkpoint that completed just before the
	// crash are aborted, which the restart then reports.
	TransactionTimeout time.Duration
}

// slots is how many transactional writers a sink starts with: one for
// the open transaction and two for those sealed by checkpoints not
// complete yet. It adds more when checkpoints complete later than that.
const slots = 3

// Sink returns a sink that writes each record as the message encode
// makes of it (a nil key leaves the partition to the client's sticky
// partitioner; records with a key go to the key's partition).
//
// In a job with checkpoints it is exactly-once (weir.TwoPhase): the
// records of each checkpoint go in a Kafka transaction that commits when
// the checkpoint completes, and read_committed consumers see each record
// once, whatever crashes and restarts happen. Without checkpoints, or
// with AtLeastOnce, it writes with the idempotent producer and flushes at
// every epoch's end.
//
// In a job with checkpoints a sink runs as one instance (the default for
// a sink; the job refuses more). Without checkpoints, instances share one
// producer.
func Sink[T any](cfg SinkConfig, encode func(v T) (key, value []byte)) *SinkOutput[T] {
	return &SinkOutput[T]{cfg: cfg, encode: encode, sealed: map[uint64][]sealedTxn{}}
}

// SinkOutput is the weir.Output Sink returns.
type SinkOutput[T any] struct {
	cfg     SinkConfig
	encode  func(T) (key, value []byte)
	mu      sync.Mutex
	ready   bool // checked the topic
	topicID [16]byte
	plain   *kgo.Client
	adm     *kgo.Client
	tx      bool    // writes go in transactions
	pool    []*slot // every transactional writer
	cur     *slot   // the one with the open transaction, if any
	sealed  map[uint64][]sealedTxn
	// done is the highest checkpoint committed, last the highest
	// prepared.
	done, last uint64
	errMu      sync.Mutex
	err        error // the first failed produce
}

// slot is one transactional writer.
type slot struct {
	id   string
	cl   *kgo.Client
	busy bool // holds an open or sealed transaction
}

var (
	_ weir.TwoPhase  = (*SinkOutput[int])(nil)
	_ weir.EpochSink = (*SinkOutput[int])(nil)
)

func (s *SinkOutput[T]) prefix() string {
	if s.cfg.TransactionalID != "" {
		return s.cfg.TransactionalID
	}
	return "weir-" + s.cfg.Topic
}

func (s *SinkOutput[T]) timeout() time.Duration {
	if s.cfg.TransactionTimeout > 0 {
		return s.cfg.TransactionTimeout
	}
	return 10 * time.Minute
}

// Check reports whether the sink can write: the brokers answer and the
// topic exists or is made (Create).
func (s *SinkOutput[T]) Check(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.setup(ctx)
}

// setup checks the topic, once. s.mu is held.
func (s *SinkOutput[T]) setup(ctx context.Context) error {
	if s.ready {
		return nil
	}
	switch {
	case s.cfg.Topic == "":
		return errors.New("kafka: sink: no topic")
	case s.encode == nil:
		return errors.New("kafka: sink: no encoder")
	case s.cfg.Partitions < 0 || s.cfg.Replication < 0:
		return fmt.Errorf("kafka: sink: %d partitions, %d replicas", s.cfg.Partitions, s.cfg.Replication)
	}
	adm, err := s.cfg.dial()
	if err != nil {
		return err
	}
	ka := kadm.NewClient(adm)
	if _, err := partitions(ctx, ka, s.cfg.Config, s.cfg.Topic); err != nil {
		if !s.cfg.Create || !errors.Is(err, errMissing) {
			adm.Close()
			return err
		}
		if err := s.create(ctx, ka); err != nil {
			adm.Close()
			return err
		}
	}
	// The topic's id, which transactions' markers name (create sets it
	// for a topic it made: metadata may list that one without it).
	if s.topicID == ([16]byte{}) {
		md, err := ka.Metadata(ctx, s.cfg.Topic)
		if err != nil {
			adm.Close()
			return fmt.Errorf("kafka: %s: metadata of topic %s: %v", s.cfg.where(), s.cfg.Topic, err)
		}
		s.topicID = md.Topics[s.cfg.Topic].ID
	}
	s.adm, s.ready = adm, true
	return nil
}

func (s *SinkOutput[T]) create(ctx context.Context, ka *kadm.Client) error {
	parts, repl := s.cfg.Partitions, s.cfg.Replication
	if parts == 0 {
		parts = 1
	}
	if repl == 0 {
		repl = 1
	}
	resp, err := ka.CreateTopic(ctx, parts, repl, nil, s.cfg.Topic)
	if err == nil && resp.Err != nil && !errors.Is(resp.Err, errExists) {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("kafka: %s: creating topic %s: %v", s.cfg.where(), s.cfg.Topic, err)
	}
	s.topicID = resp.ID
	return nil
}

// Write implements weir.Output.
func (s *SinkOutput[T]) Write(batch []T) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.setup(context.Background()); err != nil {
		return err
	}
	if err := s.failed(); err != nil {
		return err
	}
	cl, err := s.writer()
	if err != nil {
		return err
	}
	for i := range batch {
		k, v := s.encode(batch[i])
		cl.Produce(context.Background(), &kgo.Record{Topic: s.cfg.Topic, Key: k, Value: v}, s.produced)
	}
	return nil
}

// produced keeps the first failed produce.
func (s *SinkOutput[T]) produced(_ *kgo.Record, err error) {
	if err != nil {
		s.errMu.Lock()
		if s.err == nil {
			s.err = fmt.Errorf("kafka: %s: writing to topic %s: %w", s.cfg.where(), s.cfg.Topic, err)
		}
		s.errMu.Unlock()
	}
}

func (s *SinkOutput[T]) failed() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// writer returns the client that takes writes now: the plain producer,
// or a transactional one with its transaction begun. s.mu is held.
func (s *SinkOutput[T]) writer() (*kgo.Client, error) {
	if !s.tx {
		if s.plain == nil {
			cl, err := kgo.NewClient(append(s.cfg.opts(), kgo.DefaultProduceTopic(s.cfg.Topic))...)
			if err != nil {
				return nil, fmt.Errorf("kafka: %s: %v", s.cfg.where(), err)
			}
			s.plain = cl
		}
		return s.plain, nil
	}
	if s.cur != nil {
		return s.cur.cl, nil
	}
	var free *slot
	for _, sl := range s.pool {
		if !sl.busy {
			free = sl
			break
		}
	}
	if free == nil {
		// Every writer holds a transaction sealed by a checkpoint not
		// complete yet: add one (Recover finds it after a restart).
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.connect())
		defer cancel()
		sl, _, err := s.newSlot(ctx, len(s.pool))
		if err != nil {
			return nil, err
		}
		s.pool, free = append(s.pool, sl), sl
	}
	if err := free.cl.BeginTransaction(); err != nil {
		return nil, fmt.Errorf("kafka: %s: transaction %s: %w", s.cfg.where(), free.id, err)
	}
	free.busy, s.cur = true, free
	return free.cl, nil
}
