package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirstream/weir/internal/bin"
)

// Each transaction sealed by checkpoint n also commits, as an offset of
// the group weir-sink-<prefix> on partition 0 of the topic, the marker n.
// The brokers make the marker visible with the transaction's records, so
// after a restart the group's committed offset is the last checkpoint
// whose records are visible: a transaction of a later checkpoint that
// the restart finds sealed must be committed, and is lost if it cannot
// be. The producer id and epoch alone cannot tell: brokers before
// Kafka 4 keep one epoch for a writer's many transactions, and a
// transaction aborted by its timeout and one committed before both answer
// a late commit with a fenced epoch.

// sealedTxn is a transaction sealed by checkpoint n.
type sealedTxn struct {
	sl    *slot // nil in a note read back
	n     uint64
	id    string
	pid   int64
	epoch int16
}

func (s *SinkOutput[T]) group() string { return "weir-sink-" + s.prefix() }

// mark adds the marker n to the open transaction of sl.
func (s *SinkOutput[T]) mark(ctx context.Context, sl *slot, pid int64, epoch int16, n uint64) error {
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = sl.id, pid, epoch, s.group()
	resp, err := add.RequestWith(ctx, sl.cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		return fmt.Errorf("adding the checkpoint's marker: %w", err)
	}
	commit := kmsg.NewPtrTxnOffsetCommitRequest()
	commit.TransactionalID, commit.Group, commit.ProducerID, commit.ProducerEpoch = sl.id, s.group(), pid, epoch
	meta := fmt.Sprintf("weir checkpoint %d", n)
	commit.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: s.cfg.Topic, TopicID: s.topicID, Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: int64(n), LeaderEpoch: -1, Metadata: &meta}}}}
	cresp, err := commit.RequestWith(ctx, sl.cl)
	if err == nil {
		for _, t := range cresp.Topics {
			for _, p := range t.Partitions {
				if err == nil {
					err = kerr.ErrorForCode(p.ErrorCode)
				}
			}
		}
	}
	if err != nil {
		return fmt.Errorf("committing the checkpoint's marker: %w", err)
	}
	return nil
}

// committedMark returns the last checkpoint whose transaction the brokers
// made visible (0: none).
func (s *SinkOutput[T]) committedMark(ctx context.Context) (uint64, error) {
	offs, err := kadm.NewClient(s.adm).FetchOffsets(ctx, s.group())
	if errors.Is(err, kerr.GroupIDNotFound) {
		return 0, nil // no transaction with a marker committed yet
	}
	if err != nil {
		return 0, fmt.Errorf("kafka: %s: reading the checkpoint marker of group %s: %w", s.cfg.where(), s.group(), err)
	}
	o, ok := offs.Lookup(s.cfg.Topic, 0)
	if !ok || o.Err != nil || o.At < 0 {
		return 0, nil
	}
	return uint64(o.At), nil
}

// commitNote commits, in order, the transactions the note of checkpoint n
// lists that are newer than the marker the brokers hold, as their writers
// would have had they not stopped.
func (s *SinkOutput[T]) commitNote(ctx context.Context, n uint64, note []byte) error {
	txns, err := readNote(note)
	if err != nil {
		return fmt.Errorf("kafka: topic %s: the note of checkpoint %d: %w", s.cfg.Topic, n, err)
	}
	done, err := s.committedMark(ctx)
	if err != nil {
		return err
	}
	for _, t := range txns {
		if t.n <= done || t.n <= s.done {
			continue
		}
		if err := s.endTxn(ctx, t); err != nil {
			return fmt.Errorf("kafka: topic %s: transaction %s of checkpoint %d could not be committed (%v), so its records are lost: it was aborted, most likely because its %v timeout ran out before the job restarted (raise TransactionTimeout)", s.cfg.Topic, t.id, t.n, err, s.timeout())
		}
	}
	return nil
}

// endTxn commits a transaction by its id, producer id and epoch, retrying
// what the brokers answer with a retriable error.
func (s *SinkOutput[T]) endTxn(ctx context.Context, t sealedTxn) error {
	for try := 0; ; try++ {
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = t.id, t.pid, t.epoch, true
		resp, err := req.RequestWith(ctx, s.adm)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err == nil || !kerr.IsRetriable(err) || try == 20 {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// A note is the format byte 2 and the number of transactions, then per
// transaction its checkpoint, the length of its id and the id, the
// producer id and the epoch, all uvarints but the id's bytes.
func appendNote(b []byte, txns []sealedTxn) []byte {
	b = append(b, 2)
	b = binary.AppendUvarint(b, uint64(len(txns)))
	for _, t := range txns {
		b = binary.AppendUvarint(b, t.n)
		b = binary.AppendUvarint(b, uint64(len(t.id)))
		b = append(b, t.id...)
		b = binary.AppendUvarint(b, uint64(t.pid))
		b = binary.AppendUvarint(b, uint64(uint16(t.epoch)))
	}
	return b
}

func readNote(b []byte) ([]sealedTxn, error) {
	if len(b) == 0 || b[0] != 2 {
		return nil, bin.ErrTruncated
	}
	d := bin.Decoder{B: b[1:]}
	count := d.Int(int64(len(b)))
	var out []sealedTxn
	for range count {
		t := sealedTxn{n: d.Uvarint(), id: d.String()}
		t.pid, t.epoch = int64(d.Uvarint()), int16(uint16(d.Uvarint()))
		if d.Err != nil {
			return nil, d.Err
		}
		out = append(out, t)
	}
	if d.Err == nil && len(d.B) != 0 {
		return nil, bin.ErrTruncated
	}
	return out, d.Err
}
