package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Recover implements weir.TwoPhase. It runs in a job with checkpoints
// before anything is written: unless AtLeastOnce, the sink then writes
// in transactions, and it starts each of its transactional writers,
// which aborts whatever an earlier run of the job had left open under
// their ids (written after the checkpoint the job restarts from).
func (s *SinkOutput[T]) Recover(uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.connect()+s.timeout())
	defer cancel()
	if err := s.setup(ctx); err != nil {
		return err
	}
	if s.cfg.AtLeastOnce || s.tx {
		return nil
	}
	// Start the writers of the earlier runs, which aborts what they
	// left open: ids prefix-0, prefix-1, ... up to the first the
	// brokers did not know (a new id starts at epoch 0) beyond the
	// first slots.
	for k := 0; ; k++ {
		sl, epoch, err := s.newSlot(ctx, k)
		if err != nil {
			return err
		}
		s.pool = append(s.pool, sl)
		if epoch == 0 && k >= slots-1 {
			break
		}
	}
	s.tx = true
	return nil
}

// newSlot starts the transactional writer prefix-k and returns it with
// its epoch.
func (s *SinkOutput[T]) newSlot(ctx context.Context, k int) (*slot, int16, error) {
	id := fmt.Sprintf("%s-%d", s.prefix(), k)
	cl, err := kgo.NewClient(append(s.cfg.opts(), kgo.TransactionalID(id), kgo.TransactionTimeout(s.timeout()), kgo.DefaultProduceTopic(s.cfg.Topic))...)
	var epoch int16
	if err == nil {
		_, epoch, err = cl.ProducerID(ctx)
		if err != nil {
			cl.Close()
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("kafka: %s: starting transactional writer %s: %w", s.cfg.where(), id, err)
	}
	return &slot{id: id, cl: cl}, epoch, nil
}

// Prepare implements weir.TwoPhase: it flushes what was written since the
// last Prepare. Without transactions that makes it durable; with them it
// seals it, durable and not visible, in the transaction that Commit(n)
// commits. The note names that transaction: its id, producer id and
// epoch.
func (s *SinkOutput[T]) Prepare(n uint64) ([]byte, error) {
	s.mu.Lock()
	cur := s.cur
	s.cur = nil
	cl := s.plain
	if cur != nil {
		cl = cur.cl
	}
	s.mu.Unlock()
	if cl == nil {
		return nil, s.failed()
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout())
	defer cancel()
	if err := cl.Flush(ctx); err != nil {
		return nil, fmt.Errorf("kafka: %s: flushing topic %s: %w", s.cfg.where(), s.cfg.Topic, err)
	}
	if err := s.failed(); err != nil || cur == nil {
		return nil, err
	}
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return nil, fmt.Errorf("kafka: %s: transaction %s: %w", s.cfg.where(), cur.id, err)
	}
	s.mu.Lock()
	s.sealed[n] = append(s.sealed[n], cur)
	s.mu.Unlock()
	return appendNote(nil, cur.id, pid, epoch), nil
}

// Commit implements weir.TwoPhase: it commits the transactions sealed by
// the checkpoints up to n. After a restart it commits the one the note
// names, unless it was committed before; one aborted meanwhile (its
// timeout ran out) is an error, since its records are lost.
func (s *SinkOutput[T]) Commit(n uint64, note []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.connect()+s.timeout())
	defer cancel()
	if err := s.setup(ctx); err != nil {
		return err
	}
	if n <= s.done {
		return nil
	}
	for _, m := range slices.Sorted(maps.Keys(s.sealed)) {
		if m > n {
			break
		}
		for _, sl := range s.sealed[m] {
			if err := sl.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
				return fmt.Errorf("kafka: %s: committing transaction %s of checkpoint %d: %w", s.cfg.where(), sl.id, m, err)
			}
			sl.busy = false
		}
		delete(s.sealed, m)
		s.done = m
	}
	if s.done < n && len(note) > 0 {
		if err := s.commitNote(ctx, n, note); err != nil {
			return err
		}
	}
	s.done = n
	return nil
}

// commitNote commits the transaction a note of checkpoint n names, as
// its writer would have had it not stopped.
func (s *SinkOutput[T]) commitNote(ctx context.Context, n uint64, note []byte) error {
	id, pid, epoch, err := readNote(note)
	if err != nil {
		return fmt.Errorf("kafka: topic %s: the note of checkpoint %d: %w", s.cfg.Topic, n, err)
	}
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, true
	resp, err := req.RequestWith(ctx, s.adm)
	if err != nil {
		return fmt.Errorf("kafka: %s: committing transaction %s of checkpoint %d: %w", s.cfg.where(), id, n, err)
	}
	switch err := kerr.ErrorForCode(resp.ErrorCode); {
	case err == nil:
		return nil
	case errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerEpoch):
		// The id has moved on to later epochs, which happens only once
		// its transactions up to n are committed: a run restored from n
		// committed it and went on.
		return nil
	case errors.Is(err, kerr.InvalidTxnState):
		return fmt.Errorf("kafka: topic %s: transaction %s of checkpoint %d was aborted before it could be committed, so its records are lost: its %v timeout ran out before the job restarted (raise TransactionTimeout)", s.cfg.Topic, id, n, s.timeout())
	default:
		return fmt.Errorf("kafka: %s: committing transaction %s of checkpoint %d: %w", s.cfg.where(), id, n, err)
	}
}

// EndEpoch implements weir.EpochSink: without transactions it flushes.
func (s *SinkOutput[T]) EndEpoch(uint64) error {
	s.mu.Lock()
	cl := s.plain
	s.mu.Unlock()
	if cl != nil {
		if err := cl.Flush(context.Background()); err != nil {
			return fmt.Errorf("kafka: %s: flushing topic %s: %w", s.cfg.where(), s.cfg.Topic, err)
		}
	}
	return s.failed()
}

// Close implements weir.Output: at the end of a job it commits
// everything written, sealed or not.
func (s *SinkOutput[T]) Close() error {
	if err := s.EndEpoch(0); err != nil {
		return err
	}
	if _, err := s.Prepare(^uint64(0)); err != nil {
		return err
	}
	if err := s.Commit(^uint64(0), nil); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sl := range s.pool {
		sl.cl.Close()
	}
	if s.plain != nil {
		s.plain.Close()
	}
	if s.adm != nil {
		s.adm.Close()
	}
	s.pool, s.plain, s.adm, s.ready, s.tx = nil, nil, nil, false, false
	return s.failed()
}

// A note is the format byte 1, the transactional id as a uvarint length
// and its bytes, the producer id as a uvarint and the epoch as a uvarint.
func appendNote(b []byte, id string, pid int64, epoch int16) []byte {
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(len(id)))
	b = append(b, id...)
	b = binary.AppendUvarint(b, uint64(pid))
	return binary.AppendUvarint(b, uint64(epoch))
}

func readNote(b []byte) (id string, pid int64, epoch int16, err error) {
	bad := errors.New("truncated or corrupt")
	if len(b) == 0 || b[0] != 1 {
		return "", 0, 0, bad
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return "", 0, 0, bad
	}
	id, b = string(b[k:k+int(n)]), b[k+int(n):]
	p, k := binary.Uvarint(b)
	if k <= 0 {
		return "", 0, 0, bad
	}
	e, k2 := binary.Uvarint(b[k:])
	if k2 <= 0 || k+k2 != len(b) {
		return "", 0, 0, bad
	}
	return id, int64(p), int16(e), nil
}
