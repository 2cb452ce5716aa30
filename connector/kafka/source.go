package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
)

// Start says where a source without a checkpoint starts reading.
type Start int

const (
	// StartEarliest reads each partition from its first record.
	StartEarliest Start = iota
	// StartLatest reads only records written after the reader opens.
	StartLatest
	// StartAtTime reads from the first record whose timestamp is at or
	// after SourceConfig.At.
	StartAtTime
	// StartCommitted reads each partition from the offset
	// SourceConfig.Group committed for it, or from its first record where
	// the group has none.
	StartCommitted
)

func (s Start) String() string {
	switch s {
	case StartEarliest:
		return "earliest"
	case StartLatest:
		return "latest"
	case StartAtTime:
		return "time"
	case StartCommitted:
		return "committed"
	}
	return fmt.Sprintf("Start(%d)", int(s))
}

// SourceConfig is a source over one topic.
type SourceConfig struct {
	Config
	Topic string
	Start Start
	At    time.Time // with StartAtTime
	// Bounded stops each partition at the end its committed records had
	// when the reader opened (the last stable offset), so that a backfill
	// or a test ends by itself. The ends are kept in checkpoints, so a
	// restored job stops where the first run would have.
	Bounded bool
	// DeadLetter, if set, receives the records decode rejects, with their
	// topic, partition and offset; nil: such a record fails the job.
	DeadLetter *file.DeadLetter
	// Discover is how often a reader looks for partitions added to the
	// topic (default 5 s; negative: never). A bounded source never does.
	Discover time.Duration
	// Group, if set, is a consumer group whose offsets the readers commit
	// where they stand once a checkpoint holding that is complete
	// (weir.Acknowledged; without checkpoints, at every epoch's end), so
	// that Kafka's tools show the job's lag, and StartCommitted resumes
	// there. The group never assigns partitions: no consumer should join
	// it.
	Group string
}

// Message is a record as read from a partition.
type Message struct {
	Key, Value []byte
	Partition  int32
	Offset     int64
	Time       time.Time
}

// Source returns a source of the records decode makes of the topic's
// messages. Partition p is read by instance p mod n of the source's n
// instances, so the processes of a job share a topic's partitions without
// a consumer group. It reads committed records only (read_committed).
func Source[T any](cfg SourceConfig, decode func(m Message) (T, error)) *SourceInput[T] {
	return &SourceInput[T]{cfg: cfg, decode: decode}
}

// Values adapts a decoder of values to Source's decoder.
func Values[T any](decode func(value []byte) (T, error)) func(Message) (T, error) {
	return func(m Message) (T, error) { return decode(m.Value) }
}

// SourceInput is the weir.Input Source returns.
type SourceInput[T any] struct {
	cfg    SourceConfig
	decode func(Message) (T, error)
	name   string // the source's name in the job, for dead letters
	ts     func(T) int64
	idle   time.Duration
	mu     sync.Mutex
	lag    map[int32]int64 // by partition
}

var (
	_ weir.Recoverable = (*SourceInput[int])(nil)
	_ weir.Identified  = (*SourceInput[int])(nil)
	_ weir.Counted     = (*SourceInput[int])(nil)
)

// Check reports, without reading, whether the topic can be read: the
// brokers answer and the topic exists.
func (s *SourceInput[T]) Check(ctx context.Context) error {
	if err := s.validate(); err != nil {
		return err
	}
	cl, err := s.cfg.dial()
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = partitions(ctx, kadm.NewClient(cl), s.cfg.Config, s.cfg.Topic)
	return err
}

func (s *SourceInput[T]) validate() error {
	switch {
	case s.cfg.Topic == "":
		return errors.New("kafka: source: no topic")
	case s.decode == nil:
		return errors.New("kafka: source: no decoder")
	case s.cfg.Start < StartEarliest || s.cfg.Start > StartCommitted:
		return fmt.Errorf("kafka: source: %v is not a start", s.cfg.Start)
	case s.cfg.Start == StartAtTime && s.cfg.At.IsZero():
		return errors.New("kafka: source: StartAtTime without a time")
	case s.cfg.Start == StartCommitted && s.cfg.Group == "":
		return errors.New("kafka: source: StartCommitted without a Group")
	}
	return s.cfg.validate()
}

// Recover implements weir.Recoverable: the source learns its name and
// passes the call on to its dead-letter output.
func (s *SourceInput[T]) Recover(rc weir.RecoverContext) error {
	s.name = rc.Source
	if s.cfg.DeadLetter != nil {
		return s.cfg.DeadLetter.Recover(rc)
	}
	return nil
}

// Identity implements weir.Identified: the topic and where reading starts.
func (s *SourceInput[T]) Identity() string {
	id := fmt.Sprintf("kafka topic %s from %v", s.cfg.Topic, s.cfg.Start)
	switch s.cfg.Start {
	case StartAtTime:
		id += " " + s.cfg.At.UTC().Format(time.RFC3339Nano)
	case StartCommitted:
		id += " of group " + s.cfg.Group
	}
	if s.cfg.Bounded {
		id += ", bounded"
	}
	return id
}

// Counters implements weir.Counted: kafka_lag, the records in this
// process's partitions not read yet as of the readers' last fetches, and
// the dead letters.
func (s *SourceInput[T]) Counters() map[string]int64 {
	s.mu.Lock()
	var lag int64
	for _, l := range s.lag {
		lag += l
	}
	s.mu.Unlock()
	out := map[string]int64{"kafka_lag": lag}
	if s.cfg.DeadLetter != nil {
		out["dead_letters"] = s.cfg.DeadLetter.Count()
	}
	return out
}

// setLag notes the lag of the partitions a reader read: by partition, so
// that a partition's new owner after a rescale replaces the old one's.
func (s *SourceInput[T]) setLag(hwm, next map[int32]int64) {
	s.mu.Lock()
	if s.lag == nil {
		s.lag = map[int32]int64{}
	}
	for p, h := range hwm {
		s.lag[p] = max(0, h-next[p])
	}
	s.mu.Unlock()
}

// Open implements weir.Input: it finds the instance's partitions and where
// each starts (and, bounded, ends).
func (s *SourceInput[T]) Open(sc weir.SourceContext) (weir.Reader[T], error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	adm, err := s.cfg.dial()
	if err != nil {
		return nil, err
	}
	r := &reader[T]{in: s, sc: sc, adm: adm, kadm: kadm.NewClient(adm), next: map[int32]int64{}, stop: map[int32]int64{}}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.connect())
	defer cancel()
	n, err := partitions(ctx, r.kadm, s.cfg.Config, s.cfg.Topic)
	if err != nil {
		adm.Close()
		return nil, err
	}
	var mine []int32
	for p := range n {
		if owns(p, sc.Instance, sc.Parallelism) {
			mine = append(mine, p)
		}
	}
	if err := r.startAt(ctx, mine, s.cfg.Start); err != nil {
		adm.Close()
		return nil, err
	}
	r.known = n
	r.lastLook, r.opened = time.Now(), time.Now()
	if s.cfg.Group != "" {
		return groupReader[T]{r}, nil
	}
	return r, nil
}
