package kafka

import (
	"math"
	"time"
)

// EventTime makes the source hand out the records of its partitions in
// step by event time (ts), so that the watermark a weir.EventTime after
// it computes from the records it sees is that of its slowest partition:
// a reader that owns several partitions holds a partition's records back
// until every other partition it reads has records at least as old, or
// has none to give (it is read to its end) or has given none for idle.
// Without it a reader hands out records as they are fetched, and a
// partition read ahead of another can make the other's records late.
//
// The records held back are at most a few thousand per partition (its
// fetching pauses beyond that); the position kept in checkpoints is
// after the records handed out. idle ≤ 0 never counts a partition idle;
// an idle shorter than a fetch may stall lets the other partitions run
// ahead of it, and its records then come late.
func (s *SourceInput[T]) EventTime(ts func(T) int64, idle time.Duration) *SourceInput[T] {
	s.ts, s.idle = ts, idle
	return s
}

// maxQueued is the most records a partition's queue holds before its
// fetching pauses.
const maxQueued = 2 * maxBatch

// entry is a record fetched and not handed out yet.
type entry[T any] struct {
	v    T
	off  int64
	t    int64
	emit bool // a record; false: a control record or a dead letter
}

// aligned is what a reader with an event time keeps per partition.
type aligned struct {
	last   map[int32]time.Time // when the partition last gave a record
	paused map[int32]bool
}

// fetched is the offset after the last record of p fetched.
func (r *reader[T]) fetched(p int32) int64 {
	if q := r.q[p]; len(q) > 0 {
		return q[len(q)-1].off + 1
	}
	return r.next[p]
}

func (r *reader[T]) enqueue(p int32, e entry[T]) {
	if r.q == nil {
		r.q, r.last, r.paused = map[int32][]entry[T]{}, map[int32]time.Time{}, map[int32]bool{}
	}
	if e.emit {
		e.t = r.in.ts(e.v)
	}
	r.q[p] = append(r.q[p], e)
	r.last[p] = time.Now()
	if len(r.q[p]) >= maxQueued && !r.paused[p] {
		r.paused[p] = true
		r.cl.PauseFetchPartitions(map[string][]int32{r.topic(): {p}})
	}
}

// drain hands out, oldest first, the queued records that no partition
// holds back.
func (r *reader[T]) drain() {
	for len(r.out) < maxBatch {
		// Skipped entries at the heads go at once.
		head, ht := int32(-1), int64(math.MaxInt64)
		for p, q := range r.q {
			for len(q) > 0 && !q[0].emit {
				r.pass(p, q[0])
				q = q[1:]
			}
			r.q[p] = q
			if len(q) > 0 && q[0].t < ht {
				head, ht = p, q[0].t
			}
		}
		if head < 0 || r.holdsBack(head) {
			break
		}
		r.pass(head, r.q[head][0])
		r.q[head] = r.q[head][1:]
	}
	for p, q := range r.q {
		if r.paused[p] && len(q) < maxQueued/2 {
			delete(r.paused, p)
			r.cl.ResumeFetchPartitions(map[string][]int32{r.topic(): {p}})
		}
	}
}

// holdsBack says whether a partition other than head, with nothing
// queued, may still give records older than head's: it is not read to
// its end (bounded), not caught up with its high watermark, and not idle.
func (r *reader[T]) holdsBack(head int32) bool {
	for p, n := range r.next {
		if p == head || len(r.q[p]) > 0 {
			continue
		}
		switch {
		case r.in.cfg.Bounded && n >= r.stop[p]:
		case r.hwmSeen(p) && n >= r.hwm[p]:
		case r.in.idle > 0 && time.Since(r.lastOr(p)) >= r.in.idle:
		default:
			return true
		}
	}
	return false
}

func (r *reader[T]) hwmSeen(p int32) bool {
	_, ok := r.hwm[p]
	return ok
}

// lastOr is when p last gave a record, or when the reader opened.
func (r *reader[T]) lastOr(p int32) time.Time {
	if t, ok := r.last[p]; ok {
		return t
	}
	return r.opened
}
