package main

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir"
)

// clock is the input schedule of a whole rescale benchmark, shared by
// every source instance of every job of the run: record n (counting the
// records handed out since start, over all readers) is due at start +
// n/rate. Unlike weir.Paced, whose schedule starts again with each job,
// it keeps running across a restart, so the input that arrives while no
// job reads (the downtime) waits, as it would in a broker, and the
// restarted job catches up on it.
type clock struct {
	start time.Time
	// steps are the rates, records per second over all readers, each
	// for its length; the last one's holds on after it.
	steps []rateStep
	taken atomic.Int64
}

// rateStep is a rate held for a time.
type rateStep struct {
	rate float64
	len  time.Duration
}

// steadyClock is the schedule of rate from now on.
func steadyClock(rate float64) *clock {
	return &clock{start: time.Now(), steps: []rateStep{{rate: rate}}}
}

// due is the number of records the schedule allows to be handed out now.
func (c *clock) due() int64 {
	return int64(c.scheduled(time.Since(c.start))) + 1 - c.taken.Load()
}

// scheduled is the records due in the first d of the schedule.
func (c *clock) scheduled(d time.Duration) float64 {
	n := 0.0
	for i, s := range c.steps {
		if d <= s.len || i == len(c.steps)-1 {
			return n + d.Seconds()*s.rate
		}
		n += s.len.Seconds() * s.rate
		d -= s.len
	}
	return n
}

// rateAt is the rate d into the schedule.
func (c *clock) rateAt(d time.Duration) float64 {
	for i, s := range c.steps {
		if d < s.len || i == len(c.steps)-1 {
			return s.rate
		}
		d -= s.len
	}
	return 0
}

// scheduled wraps in so that its readers hand out records on c's
// schedule. Positions, seeks and rescaled seeks go to in's readers.
type scheduled[T any] struct {
	in weir.Input[T]
	c  *clock
}

func (s scheduled[T]) Open(ctx weir.SourceContext) (weir.Reader[T], error) {
	r, err := s.in.Open(ctx)
	if err != nil {
		return nil, err
	}
	return &scheduledReader[T]{r: r, c: s.c}, nil
}

// Identity implements weir.Identified: the wrapped input's, since the
// schedule does not decide the records.
func (s scheduled[T]) Identity() string {
	if id, ok := s.in.(weir.Identified); ok {
		return id.Identity()
	}
	return fmt.Sprintf("%T", s.in)
}

type scheduledReader[T any] struct {
	r     weir.Reader[T]
	c     *clock
	rest  []T   // records of the inner Read not handed out yet
	err   error // the inner Read's error, returned once rest is out
	inner int   // length of the inner Read's batch
	out   int   // length of the batch Read returned last
	slept time.Duration
}

// schedWait bounds a sleep in Read, which must return within a few
// milliseconds so that epochs are cut on time.
const schedWait = 2 * time.Millisecond

func (p *scheduledReader[T]) Read() ([]T, error) {
	if len(p.rest) == 0 {
		if p.err != nil {
			return nil, p.err
		}
		p.rest, p.err = p.r.Read()
		p.inner, p.out = len(p.rest), 0
		if len(p.rest) == 0 {
			return nil, p.err
		}
	}
	due := p.c.due()
	if due <= 0 {
		t0 := time.Now()
		time.Sleep(min(time.Duration(float64(-due+1)/p.c.rateAt(t0.Sub(p.c.start))*float64(time.Second)), schedWait))
		p.slept += time.Since(t0)
		p.out = 0
		return nil, nil
	}
	n := int(min(due, int64(len(p.rest))))
	p.c.taken.Add(int64(n))
	b := p.rest[:n:n]
	p.rest = p.rest[n:]
	p.out = n
	return b, nil
}

// Backlog implements weir.Backlogged: the records due on the schedule
// and not handed out (the clock's, whichever reader takes them).
func (p *scheduledReader[T]) Backlog() int64 { return max(0, p.c.due()-1) }

// Waited implements weir.Waiter: the time Read slept for the schedule.
func (p *scheduledReader[T]) Waited() time.Duration { return p.slept }

func (p *scheduledReader[T]) Close() error { return p.r.Close() }

// Position implements weir.Seekable: the records of the inner batch used
// are those handed out before the last batch, and used of it.
func (p *scheduledReader[T]) Position(used int) ([]byte, error) {
	s, ok := p.r.(weir.Seekable)
	if !ok {
		return nil, fmt.Errorf("bench rescale: the reader %T cannot be checkpointed", p.r)
	}
	return s.Position(p.inner - len(p.rest) - p.out + used)
}

// Seek implements weir.Seekable.
func (p *scheduledReader[T]) Seek(pos []byte) error {
	s, ok := p.r.(weir.Seekable)
	if !ok {
		return fmt.Errorf("bench rescale: the reader %T cannot be checkpointed", p.r)
	}
	p.rest, p.inner, p.out = nil, 0, 0
	return s.Seek(pos)
}

// SeekSplits implements weir.Rescalable.
func (p *scheduledReader[T]) SeekSplits(pos [][]byte) error {
	s, ok := p.r.(weir.Rescalable)
	if !ok {
		return fmt.Errorf("bench rescale: the reader %T cannot resume with another parallelism", p.r)
	}
	p.rest, p.inner, p.out = nil, 0, 0
	return s.SeekSplits(pos)
}
