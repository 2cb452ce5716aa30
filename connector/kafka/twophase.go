package kafka

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Recover implements weir.TwoPhase. It runs in a job with checkpoints
// before anything is written (after Commit(n) of the checkpoint the job
// restarts from): unless AtLeastOnce, the sink then writes in
// transactions, and it starts each of its transactional writers anew,
// which aborts whatever an earlier run of the job had left open under
// their ids (written after checkpoint n).
func (s *SinkOutput[T]) Recover(n uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.connect()+s.timeout())
	defer cancel()
	if err := s.setup(ctx); err != nil {
		return err
	}
	if s.cfg.AtLeastOnce {
		return nil
	}
	// A value that served a run before starts afresh.
	for _, sl := range s.pool {
		sl.cl.Close()
	}
	s.pool, s.cur, s.sealed, s.done, s.last = nil, nil, map[uint64][]sealedTxn{}, n, n
	s.errMu.Lock()
	s.err = nil
	s.errMu.Unlock()
	// Start the writers of the earlier runs: ids prefix-0, prefix-1, ...
	// up to the first the brokers did not know (a new id starts at epoch
	// 0) beyond the first slots.
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
// seals it, durable and not visible, in a transaction that also commits
// the marker n (see marker.go) and that Commit(n) commits. The note lists
// every transaction sealed and not committed yet, this one included, each
// with its checkpoint, id, producer id and epoch.
func (s *SinkOutput[T]) Prepare(n uint64) ([]byte, error) {
	s.mu.Lock()
	cur := s.cur
	s.cur = nil
	cl := s.plain
	if cur != nil {
		cl = cur.cl
	}
	s.last = max(s.last, n)
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout())
	defer cancel()
	if cl != nil {
		if err := cl.Flush(ctx); err != nil {
			return nil, fmt.Errorf("kafka: %s: flushing topic %s: %w", s.cfg.where(), s.cfg.Topic, err)
		}
	}
	if err := s.failed(); err != nil {
		return nil, err
	}
	if cur != nil {
		pid, epoch, err := cur.cl.ProducerID(ctx)
		if err == nil {
			err = s.mark(ctx, cur, pid, epoch, n)
		}
		if err != nil {
			return nil, fmt.Errorf("kafka: %s: transaction %s of checkpoint %d: %w", s.cfg.where(), cur.id, n, err)
		}
		s.mu.Lock()
		s.sealed[n] = append(s.sealed[n], sealedTxn{sl: cur, n: n, id: cur.id, pid: pid, epoch: epoch})
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var open []sealedTxn
	for _, m := range slices.Sorted(maps.Keys(s.sealed)) {
		if m <= n {
			open = append(open, s.sealed[m]...)
		}
	}
	if len(open) == 0 {
		return nil, nil
	}
	return appendNote(nil, open), nil
}

// Commit implements weir.TwoPhase: it commits the transactions sealed by
// the checkpoints up to n. After a restart it commits those the note
// lists whose marker the brokers do not hold yet; one of those that
// cannot be committed (its timeout ran out, and the brokers aborted it)
// is an error, since its records are lost.
func (s *SinkOutput[T]) Commit(n uint64, note []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= s.done {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.connect()+s.timeout())
	defer cancel()
	if err := s.setup(ctx); err != nil {
		return err
	}
	for _, m := range slices.Sorted(maps.Keys(s.sealed)) {
		if m > n {
			break
		}
		for _, st := range s.sealed[m] {
			if err := st.sl.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
				return fmt.Errorf("kafka: %s: committing transaction %s of checkpoint %d: %w", s.cfg.where(), st.id, m, err)
			}
			st.sl.busy = false
		}
		delete(s.sealed, m)
		s.done = m
	}
	if len(note) > 0 {
		if err := s.commitNote(ctx, n, note); err != nil {
			return err
		}
	}
	s.done = n
	return nil
}

// EndEpoch implements weir.EpochSink: without transactions it flushes.
func (s *SinkOutput[T]) EndEpoch(uint64) error {
	s.mu.Lock()
	cl := s.plain
	s.mu.Unlock()
	if cl != nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout())
		defer cancel()
		if err := cl.Flush(ctx); err != nil {
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
	s.mu.Lock()
	final := s.last + 1
	s.mu.Unlock()
	if _, err := s.Prepare(final); err != nil {
		return err
	}
	if err := s.Commit(final, nil); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sl := range s.pool {
		sl.cl.Close()
	}
	if s.plain != nil {
		// Instances that share the sink end one by one: what another
		// wrote since the flush above is flushed before the client
		// closes, and a later Write opens a new one.
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout())
		if err := s.plain.Flush(ctx); err != nil {
			s.produced(nil, err)
		}
		cancel()
		s.plain.Close()
	}
	if s.adm != nil {
		s.adm.Close()
	}
	s.pool, s.plain, s.adm, s.ready, s.tx = nil, nil, nil, false, false
	return s.failed()
}
