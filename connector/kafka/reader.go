package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
)

// maxBatch bounds the records one Read returns.
const maxBatch = 4096

// pollWait is how long a Read waits for records before it returns an
// empty batch, so that epochs are cut on time.
const pollWait = 5 * time.Millisecond

// event is a record a Read went through: emitted, or skipped (a control
// record, a dead letter, one past a bounded end).
type event struct {
	part int32
	off  int64
	emit bool
}

// reader reads instance sc.Instance's partitions of the topic.
type reader[T any] struct {
	in   *SourceInput[T]
	sc   weir.SourceContext
	adm  *kgo.Client // metadata and offsets
	kadm *kadm.Client
	cl   *kgo.Client // the consumer, made at the first Read
	// next is the offset of the next record of each partition it reads,
	// stop (bounded) the offset it stops before.
	next, stop map[int32]int64
	before     map[int32]int64 // next as the last Read found it
	events     []event         // the last Read's records, in order
	out        []T
	hwm        map[int32]int64
	// With an event time: the records fetched and not handed out, per
	// partition, and when the reader opened.
	q      map[int32][]entry[T]
	opened time.Time
	aligned
	known    int32 // partitions of the topic seen
	lastLook time.Time
	waited   time.Duration
	// closed says Close has closed adm, which Acknowledge then cannot
	// use; ackMu guards both against Acknowledge.
	ackMu  sync.Mutex
	closed bool
}

var (
	_ weir.Rescalable   = (*reader[int])(nil)
	_ weir.Waiter       = (*reader[int])(nil)
	_ weir.Backlogged   = (*reader[int])(nil)
	_ weir.Acknowledged = groupReader[int]{}
)

func (r *reader[T]) topic() string { return r.in.cfg.Topic }

// startAt sets where parts start, from the offsets the brokers list for
// start, and, for a bounded source, where they stop.
func (r *reader[T]) startAt(ctx context.Context, parts []int32, start Start) error {
	if len(parts) == 0 {
		return nil
	}
	var (
		listed kadm.ListedOffsets
		err    error
	)
	switch start {
	case StartEarliest:
		listed, err = r.kadm.ListStartOffsets(ctx, r.topic())
	case StartLatest:
		// The last stable offset: a transaction open now, committed
		// later, is read.
		listed, err = r.kadm.ListCommittedOffsets(ctx, r.topic())
	case StartAtTime:
		listed, err = r.kadm.ListOffsetsAfterMilli(ctx, r.in.cfg.At.UnixMilli(), r.topic())
	case StartCommitted:
		listed, err = r.kadm.ListStartOffsets(ctx, r.topic())
	}
	if err == nil {
		err = r.take(listed, parts, r.next)
	}
	if err == nil && start == StartCommitted {
		err = r.committed(ctx, parts)
	}
	if err == nil {
		// The ends committed records have now: where a bounded reader
		// stops, and where any reader is caught up.
		listed, err = r.kadm.ListCommittedOffsets(ctx, r.topic())
		if r.hwm == nil {
			r.hwm = map[int32]int64{}
		}
		if err == nil {
			err = r.take(listed, parts, r.hwm)
		}
		if err == nil && r.in.cfg.Bounded {
			err = r.take(listed, parts, r.stop)
		}
	}
	if err != nil {
		return fmt.Errorf("kafka: %s: offsets of topic %s: %w", r.in.cfg.where(), r.topic(), err)
	}
	return nil
}

// take copies the listed offsets of parts into into.
func (r *reader[T]) take(listed kadm.ListedOffsets, parts []int32, into map[int32]int64) error {
	for _, p := range parts {
		o, ok := listed.Lookup(r.topic(), p)
		if !ok {
			return fmt.Errorf("partition %d not listed", p)
		}
		if o.Err != nil {
			return fmt.Errorf("partition %d: %w", p, o.Err)
		}
		into[p] = o.Offset
	}
	return nil
}

// done says whether a bounded reader has read every partition to its
// end.
func (r *reader[T]) done() bool {
	for p, n := range r.next {
		if n < r.stop[p] {
			return false
		}
	}
	return true
}

// consume makes the consumer over the partitions left to read.
func (r *reader[T]) consume() error {
	offs := map[int32]kgo.Offset{}
	for p, n := range r.next {
		if !r.in.cfg.Bounded || n < r.stop[p] {
			offs[p] = kgo.NewOffset().At(n)
		}
	}
	opts := append(r.in.cfg.opts(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{r.topic(): offs}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("kafka: %s: %v", r.in.cfg.where(), err)
	}
	r.cl = cl
	return nil
}

// Read implements weir.Reader.
func (r *reader[T]) Read() ([]T, error) {
	r.out, r.events = r.out[:0], r.events[:0]
	r.before = maps.Clone(r.next)
	if r.in.cfg.Bounded && r.done() {
		return nil, io.EOF
	}
	if r.cl == nil {
		if err := r.consume(); err != nil {
			return nil, err
		}
	}
	if err := r.discover(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), pollWait)
	fs := r.cl.PollRecords(ctx, maxBatch)
	cancel()
	if err := r.fetchErr(fs); err != nil {
		return nil, err
	}
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if r.hwm == nil {
			r.hwm = map[int32]int64{}
		}
		// What a read_committed reader can read up to.
		if p.LastStableOffset >= 0 {
			r.hwm[p.Partition] = p.LastStableOffset
		} else {
			r.hwm[p.Partition] = p.HighWatermark
		}
	})
	var err error
	fs.EachRecord(func(rec *kgo.Record) {
		if err == nil {
			err = r.take1(rec)
		}
	})
	if err != nil {
		return nil, err
	}
	if r.in.ts != nil {
		r.drain()
	}
	if len(r.out) == 0 {
		r.waited += time.Since(t0)
	}
	r.in.setLag(r.hwm, r.next)
	return r.out, nil
}

// take1 goes through one polled record.
func (r *reader[T]) take1(rec *kgo.Record) error {
	p, off := rec.Partition, rec.Offset
	if off < r.fetched(p) {
		return nil // a record before the position, refetched
	}
	e := entry[T]{off: off}
	switch {
	case r.in.cfg.Bounded && off >= r.stop[p]:
		// Every record before the end has been fetched, some perhaps
		// not seen (an aborted transaction's, filtered out): the
		// partition is read to its end.
		r.cl.PauseFetchPartitions(map[string][]int32{r.topic(): {p}})
		if r.fetched(p) >= r.stop[p] {
			return nil
		}
		e.off = r.stop[p] - 1
	case rec.Attrs.IsControl():
	default:
		v, err := r.in.decode(Message{Key: rec.Key, Value: rec.Value, Partition: p, Offset: off, Time: rec.Timestamp})
		if err != nil {
			if err := r.dead(rec, err); err != nil {
				return err
			}
			break
		}
		e.v, e.emit = v, true
	}
	if r.in.cfg.Bounded && off+1 >= r.stop[p] {
		r.cl.PauseFetchPartitions(map[string][]int32{r.topic(): {p}})
	}
	if r.in.ts != nil {
		r.enqueue(p, e)
	} else {
		r.pass(p, e)
	}
	return nil
}

// pass hands an entry of partition p on: emitted, or skipped.
func (r *reader[T]) pass(p int32, e entry[T]) {
	if e.emit {
		r.out = append(r.out, e.v)
	}
	r.events = append(r.events, event{part: p, off: e.off, emit: e.emit})
	r.next[p] = e.off + 1
}

// dead sends a record decode rejected to the dead-letter output, or
// returns the error that names it.
func (r *reader[T]) dead(rec *kgo.Record, err error) error {
	dl := r.in.cfg.DeadLetter
	if dl == nil {
		return fmt.Errorf("kafka: topic %s, partition %d, offset %d: %w", r.topic(), rec.Partition, rec.Offset, err)
	}
	return dl.Add(file.Letter{Source: r.in.name, Split: fmt.Sprintf("%s/%d", r.topic(), rec.Partition), Offset: rec.Offset, Reason: err.Error(), Record: string(rec.Value)})
}

// fetchErr returns the first error of a poll that is not its time running
// out.
func (r *reader[T]) fetchErr(fs kgo.Fetches) error {
	var first error
	fs.EachError(func(t string, p int32, err error) {
		if first == nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			first = fmt.Errorf("kafka: %s: topic %s, partition %d: %w", r.in.cfg.where(), t, p, err)
		}
	})
	return first
}

// discover adds the partitions of the topic created since it last looked
// that the instance owns, read from their first record.
func (r *reader[T]) discover() error {
	every := r.in.cfg.Discover
	if every == 0 {
		every = 5 * time.Second
	}
	if r.in.cfg.Bounded || every < 0 || time.Since(r.lastLook) < every {
		return nil
	}
	r.lastLook = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), r.in.cfg.connect())
	defer cancel()
	n, err := partitions(ctx, r.kadm, r.in.cfg.Config, r.topic())
	if err != nil || n <= r.known {
		// A failed look is tried again next period: the consumer
		// reports a cluster it cannot reach.
		return nil
	}
	var added []int32
	for p := r.known; p < n; p++ {
		if _, ok := r.next[p]; !ok && owns(p, r.sc.Instance, r.sc.Parallelism) {
			added = append(added, p)
		}
	}
	r.known = n
	if len(added) == 0 {
		return nil
	}
	if err := r.startAt(ctx, added, StartEarliest); err != nil {
		return err
	}
	offs := map[int32]kgo.Offset{}
	for _, p := range added {
		offs[p] = kgo.NewOffset().At(r.next[p])
	}
	r.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{r.topic(): offs})
	return nil
}

// Position implements weir.Seekable.
func (r *reader[T]) Position(used int) ([]byte, error) {
	if used < 0 || used > len(r.out) {
		return nil, fmt.Errorf("kafka: Position(%d) after a batch of %d records", used, len(r.out))
	}
	at := r.next
	if used < len(r.out) {
		// The records before the used-th emitted one, and the skipped
		// ones between them.
		at = maps.Clone(r.before)
		n := 0
		for _, ev := range r.events {
			if ev.emit {
				if n == used {
					break
				}
				n++
			}
			at[ev.part] = ev.off + 1
		}
	}
	if dl := r.in.cfg.DeadLetter; dl != nil {
		if err := dl.Sync(); err != nil {
			return nil, err
		}
	}
	p := position{topic: r.topic(), inst: r.sc.Instance, par: r.sc.Parallelism}
	for _, part := range slices.Sorted(maps.Keys(at)) {
		p.parts = append(p.parts, partPos{part: part, next: at[part], stop: r.stop[part]})
	}
	return p.encode(), nil
}

// Seek implements weir.Seekable.
func (r *reader[T]) Seek(b []byte) error {
	p, err := decodePosition(b)
	if err != nil {
		return fmt.Errorf("kafka: topic %s: %w", r.topic(), err)
	}
	if p.inst != r.sc.Instance || p.par != r.sc.Parallelism {
		return fmt.Errorf("kafka: topic %s: position of instance %d of %d, on the reader of instance %d of %d", r.topic(), p.inst, p.par, r.sc.Instance, r.sc.Parallelism)
	}
	return r.resume(p.topic, p.parts)
}

// SeekSplits implements weir.Rescalable: each partition resumes where the
// old reader that owned it stood.
func (r *reader[T]) SeekSplits(positions [][]byte) error {
	parts, err := mergeSplits(r.topic(), positions, r.sc.Instance, r.sc.Parallelism)
	if err != nil {
		return fmt.Errorf("kafka: topic %s: %w", r.topic(), err)
	}
	return r.resume(r.topic(), parts)
}

// resume sets the reader at parts. Partitions it owns that are not among
// them were added to the topic since: an unbounded reader reads them from
// their first record, a bounded one not at all.
func (r *reader[T]) resume(topic string, parts []partPos) error {
	if topic != r.topic() {
		return fmt.Errorf("kafka: position of topic %s on a reader of topic %s", topic, r.topic())
	}
	if r.cl != nil {
		return fmt.Errorf("kafka: topic %s: seek after the first read", r.topic())
	}
	fresh := r.next
	r.next, r.stop, r.before, r.events, r.out = map[int32]int64{}, map[int32]int64{}, nil, nil, nil
	for _, pp := range parts {
		if !owns(pp.part, r.sc.Instance, r.sc.Parallelism) {
			return fmt.Errorf("kafka: topic %s: position holds partition %d, which instance %d of %d does not read", r.topic(), pp.part, r.sc.Instance, r.sc.Parallelism)
		}
		if pp.part >= r.known {
			return fmt.Errorf("kafka: topic %s: position holds partition %d; the topic has %d", r.topic(), pp.part, r.known)
		}
		r.next[pp.part], r.stop[pp.part] = pp.next, pp.stop
	}
	if r.in.cfg.Bounded {
		return nil
	}
	var added []int32
	for p := range fresh {
		if _, ok := r.next[p]; !ok {
			added = append(added, p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.in.cfg.connect())
	defer cancel()
	return r.startAt(ctx, added, StartEarliest)
}

// Waited implements weir.Waiter: the time Reads waited for records that
// did not come.
func (r *reader[T]) Waited() time.Duration { return r.waited }

// Backlog implements weir.Backlogged: the records of its partitions after
// its position, as of the last fetches.
func (r *reader[T]) Backlog() int64 {
	var n int64
	for p, h := range r.hwm {
		n += max(0, h-r.next[p])
	}
	return n
}

// Close implements weir.Reader.
func (r *reader[T]) Close() error {
	if r.cl != nil {
		r.cl.Close()
	}
	r.ackMu.Lock()
	r.closed = true
	r.adm.Close()
	r.ackMu.Unlock()
	return nil
}
