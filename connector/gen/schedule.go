package gen

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/weirstream/weir"
)

const (
	defaultBatchSize     = 1024
	defaultEventTimeRate = 1_000_000
	// maxWait is the longest a paced Read sleeps before it returns an
	// empty batch.
	maxWait = 5 * time.Millisecond
)

// timing holds the settings every generator shares: how many records, how
// fast, and which event times.
type timing struct {
	events        int64         // total across instances; 0 = unbounded
	rate          float64       // total records/s across instances; 0 = unpaced
	duration      time.Duration // wall time limit; 0 = none
	startTime     int64         // ms; 0 = time.Now at Open
	eventTimeRate float64       // records per second of synthetic event time
	batchSize     int
}

// schedule decides, for one reader, which global sequence numbers it emits,
// how many per Read and with which event times.
//
// Instance i of p emits the global sequence numbers i, i+p, i+2p, ... (below
// the total, if there is one), so the shares differ by at most one record and
// the synthetic event times of all instances advance together.
type schedule struct {
	name   string // of the source, for errors
	kind   byte   // of the generator, in positions
	config uint64 // fingerprint of the settings that determine the records

	first  uint64 // the instance: its first global sequence number
	seq    uint64 // next global sequence number of this instance
	step   uint64 // the parallelism
	events int64  // Events: the total across instances; 0 = unbounded
	total  int64  // records in this share; -1 = unbounded
	left   int64  // records left in this share; -1 = unbounded
	batch  int

	// After SeekSplits from another parallelism, sp says which sequence
	// numbers of the share are left (see split.go). While ragged, the
	// current batch's sequence numbers are sp.seqs; else they are
	// batchSeq, batchSeq+step, ...
	sp       *splitPlan
	ragged   bool
	batchSeq uint64

	rate     float64       // this instance's records/s; 0 = unpaced
	slept    time.Duration // spent in pacing sleeps (Waited)
	duration time.Duration
	started  bool
	start    time.Time // of the first Read (since Open or Seek)
	emitted  int64     // records emitted since start
	spent0   time.Duration
	spent    time.Duration // of the Duration: spent0 + time since start

	// Event times count from t0Ms, StartTime when unpaced (by default,
	// like it is when paced, the wall clock at Open): record seq has the
	// time t0Ms + seq*1000/eventRate when unpaced; when paced, record k of
	// this instance (from 0) has t0Ms + k*1000/rate, the time it is due if
	// the first Read follows Open at once.
	t0Ms      int64
	eventRate float64 // records per second of synthetic event time
}

// newSchedule validates t for a source called name and plans instance ctx.
func newSchedule(name string, ctx weir.SourceContext, t timing) (*schedule, error) {
	switch {
	case ctx.Parallelism < 1 || ctx.Instance < 0 || ctx.Instance >= ctx.Parallelism:
		return nil, fmt.Errorf("%s: instance %d of %d is out of range", name, ctx.Instance, ctx.Parallelism)
	case t.events < 0:
		return nil, fmt.Errorf("%s: Events is %d, want ≥ 0", name, t.events)
	case t.rate < 0 || math.IsNaN(t.rate) || math.IsInf(t.rate, 0):
		return nil, fmt.Errorf("%s: Rate is %v, want a finite number ≥ 0", name, t.rate)
	case t.duration < 0:
		return nil, fmt.Errorf("%s: Duration is %v, want ≥ 0", name, t.duration)
	case t.eventTimeRate < 0 || math.IsNaN(t.eventTimeRate) || math.IsInf(t.eventTimeRate, 0):
		return nil, fmt.Errorf("%s: EventTimeRate is %v, want a finite number ≥ 0", name, t.eventTimeRate)
	case t.batchSize < 0:
		return nil, fmt.Errorf("%s: BatchSize is %d, want ≥ 0", name, t.batchSize)
	}
	s := &schedule{
		name:     name,
		first:    uint64(ctx.Instance),
		seq:      uint64(ctx.Instance),
		step:     uint64(ctx.Parallelism),
		events:   t.events,
		total:    -1,
		left:     -1,
		batch:    t.batchSize,
		rate:     t.rate / float64(ctx.Parallelism),
		duration: t.duration,
		t0Ms:     t.startTime,
	}
	if s.batch == 0 {
		s.batch = defaultBatchSize
	}
	if t.events > 0 {
		s.left = share(t.events, ctx.Instance, ctx.Parallelism)
		s.total = s.left
		s.batch = int(min(int64(s.batch), max(s.left, 1)))
	}
	if s.t0Ms == 0 || s.rate > 0 {
		s.t0Ms = time.Now().UnixMilli()
	}
	s.eventRate = t.eventTimeRate
	if s.eventRate == 0 {
		s.eventRate = defaultEventTimeRate
	}
	return s, nil
}

// share is the number of records instance i of p emits out of total.
func share(total int64, i, p int) int64 {
	if int64(i) >= total {
		return 0
	}
	return (total-int64(i)-1)/int64(p) + 1
}

// next returns how many records the current Read emits (at most the batch
// size), or io.EOF when the share is done or the duration has passed. With
// pacing it sleeps at most maxWait and may return 0.
func (s *schedule) next() (int, error) {
	if s.left == 0 {
		return 0, io.EOF
	}
	want := s.batch
	if s.left > 0 && s.left < int64(want) {
		want = int(s.left)
	}
	if s.rate == 0 && s.duration == 0 {
		return want, nil
	}
	now := time.Now()
	if !s.started {
		s.started, s.start = true, now
	}
	elapsed := now.Sub(s.start)
	if s.over(elapsed) {
		return 0, io.EOF
	}
	if s.rate == 0 {
		return want, nil
	}
	due := s.due(elapsed)
	if due == 0 {
		// Sleep until the next record is due, but not past maxWait or the
		// end of the run.
		wait := maxWait
		if w := float64(s.emitted)/s.rate - elapsed.Seconds(); w < wait.Seconds() {
			wait = time.Duration(w * 1e9)
		}
		if s.duration > 0 {
			wait = min(wait, s.duration-s.spent)
		}
		time.Sleep(max(wait, 0))
		elapsed = time.Since(s.start)
		s.slept += elapsed - now.Sub(s.start)
		if s.over(elapsed) {
			return 0, io.EOF
		}
		if due = s.due(elapsed); due == 0 {
			return 0, nil
		}
	}
	return int(min(due, int64(want))), nil
}

// over records the time spent of the Duration, elapsed since start, and
// reports whether the Duration has passed, which ends the share.
func (s *schedule) over(elapsed time.Duration) bool {
	s.spent = s.spent0 + elapsed
	if s.duration > 0 && s.spent >= s.duration {
		s.left = 0
		return true
	}
	return false
}

// due is the number of records due by elapsed and not yet emitted; record k
// (from 0) of this instance is due k/rate seconds after the first Read.
func (s *schedule) due(elapsed time.Duration) int64 {
	d := math.Floor(elapsed.Seconds()*s.rate) + 1 - float64(s.emitted)
	return int64(max(min(d, 1<<62), 0))
}

// seqAt returns the global sequence number of the i-th record of the
// current batch.
func (s *schedule) seqAt(i int) uint64 {
	if s.ragged {
		return s.sp.seqs[i]
	}
	return s.batchSeq + uint64(i)*s.step
}

// plan sets the sequence numbers of a batch of n records, from seq.
func (s *schedule) plan(n int) {
	s.batchSeq = s.seq
	s.ragged = s.sp != nil && s.seq < s.sp.maxNext
	if s.ragged {
		s.sp.fill(s.seq, s.step, n)
	}
}

// eventTime returns the event time, in ms, of record seq of this
// instance: when paced, the wall clock at Open plus k/rate for the
// instance's k-th record, else StartTime + seq/EventTimeRate. After
// SeekSplits from another parallelism, it is t0 + seq/totalRate.
func (s *schedule) eventTime(seq uint64) int64 {
	if s.sp != nil {
		return syntheticTime(s.t0Ms, s.totalRate(), seq)
	}
	if s.rate > 0 {
		k := (seq - s.first) / s.step
		return s.t0Ms + int64(float64(k)*1000/s.rate)
	}
	return syntheticTime(s.t0Ms, s.eventRate, seq)
}

// advance records that the n records of the batch were emitted.
func (s *schedule) advance(n int) {
	if s.ragged {
		s.seq = s.sp.after(s.sp.seqs[n-1], s.step)
	} else {
		s.seq += uint64(n) * s.step
	}
	s.emitted += int64(n)
	if s.left > 0 {
		s.left -= int64(n)
	}
}

// stop ends the share: the next Read returns io.EOF.
func (s *schedule) stop() { s.left = 0 }

// syntheticTime is the event time of record seq at rate records per second
// of event time from startMs.
func syntheticTime(startMs int64, rate float64, seq uint64) int64 {
	return startMs + int64(float64(seq)*1000/rate)
}

// totalRate is the number of records per second of event time across all
// instances: Rate when paced, else EventTimeRate.
func (s *schedule) totalRate() float64 {
	if s.rate > 0 {
		return s.rate * float64(s.step)
	}
	return s.eventRate
}

// reader is the Reader of every generator: the schedule says how many
// records to emit, fill writes them into the reused buffer.
type reader[T any] struct {
	s    *schedule
	buf  []T
	fill func(s *schedule, batch []T) // batch[i] gets record s.seqAt(i)
	last int                          // length of the last batch
}

func newReader[T any](s *schedule, fill func(*schedule, []T)) *reader[T] {
	return &reader[T]{s: s, buf: make([]T, s.batch), fill: fill}
}

// Read implements weir.Reader.
func (r *reader[T]) Read() ([]T, error) {
	n, err := r.s.next()
	r.last = n
	if n == 0 {
		return r.buf[:0], err
	}
	b := r.buf[:n]
	r.s.plan(n)
	r.fill(r.s, b)
	r.s.advance(n)
	return b, nil
}

// Waited implements weir.Waiter: the time Read slept to pace the records.
func (r *reader[T]) Waited() time.Duration { return r.s.slept }

// Close implements weir.Reader. Read returns io.EOF after Close.
func (r *reader[T]) Close() error {
	r.s.stop()
	r.buf = nil
	return nil
}
