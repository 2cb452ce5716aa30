package op

import (
	"fmt"
	"math"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
)

// Paced replays in at a steady rate records per second of wall time in
// all, as a real stream arrives: each of the source's instances reads its
// share at rate/instances. A recorded input (a file, say) then behaves
// like a live one, for demonstrations and for tests of recovery and
// latency. The pace starts at the first Read; a reader that falls behind
// catches up without bursts beyond one batch.
func Paced[T any](in dataflow.Input[T], rate float64) dataflow.Input[T] {
	return pacedInput[T]{in: in, rate: rate}
}

type pacedInput[T any] struct {
	in   dataflow.Input[T]
	rate float64
}

func (p pacedInput[T]) Open(ctx dataflow.SourceContext) (dataflow.Reader[T], error) {
	if !(p.rate > 0) || math.IsInf(p.rate, 0) {
		return nil, fmt.Errorf("weir: Paced: rate %v, want a positive number of records per second", p.rate)
	}
	r, err := p.in.Open(ctx)
	if err != nil {
		return nil, err
	}
	pr := &pacedReader[T]{r: r, rate: p.rate / float64(max(1, ctx.Parallelism))}
	if a, ok := r.(dataflow.Acknowledged); ok {
		return pacedAcked[T]{pr, a}, nil
	}
	return pr, nil
}

// pacedAcked is a paced reader whose inner reader wants its positions
// acknowledged: the positions are the inner reader's.
type pacedAcked[T any] struct {
	*pacedReader[T]
	a dataflow.Acknowledged
}

func (p pacedAcked[T]) Acknowledge(pos []byte) error { return p.a.Acknowledge(pos) }

// Recover implements Recoverable if the inner input does.
func (p pacedInput[T]) Recover(rc dataflow.RecoverContext) error {
	if r, ok := p.in.(dataflow.Recoverable); ok {
		return r.Recover(rc)
	}
	return nil
}

type pacedReader[T any] struct {
	r       dataflow.Reader[T]
	rate    float64 // this reader's records per second
	start   time.Time
	emitted int64
	rest    []T   // records of the inner Read not returned yet
	err     error // the inner Read's error, returned once rest is out
	inner   int   // length of the inner Read's batch
	out     int   // length of the batch Read returned last
	slept   time.Duration
}

// Waited implements dataflow.Waiter: the time Read slept to pace the
// records, and what the inner reader waited.
func (p *pacedReader[T]) Waited() time.Duration {
	d := p.slept
	if w, ok := p.r.(dataflow.Waiter); ok {
		d += w.Waited()
	}
	return d
}

// Position implements Seekable if the inner reader does: the records of
// the inner batch used are those returned before the last batch, and used
// of it.
func (p *pacedReader[T]) Position(used int) ([]byte, error) {
	s, ok := p.r.(dataflow.Seekable)
	if !ok {
		return nil, fmt.Errorf("weir: the reader %T cannot be checkpointed: it does not implement weir.Seekable", p.r)
	}
	return s.Position(p.inner - len(p.rest) - p.out + used)
}

// Seek implements Seekable if the inner reader does.
func (p *pacedReader[T]) Seek(pos []byte) error {
	s, ok := p.r.(dataflow.Seekable)
	if !ok {
		return fmt.Errorf("weir: the reader %T cannot be checkpointed: it does not implement weir.Seekable", p.r)
	}
	p.rest, p.inner, p.out = nil, 0, 0
	return s.Seek(pos)
}

// Backlog implements dataflow.Backlogged: the records due and not read
// (once the inner reader has ended, at most those it returned and this
// one did not).
func (p *pacedReader[T]) Backlog() int64 {
	if p.start.IsZero() {
		return 0
	}
	due := max(0, int64(time.Since(p.start).Seconds()*p.rate)-p.emitted)
	if p.err != nil {
		due = min(due, int64(len(p.rest)))
	}
	return due
}

// maxWait bounds a sleep in Read, which must return within a few
// milliseconds so that epochs are cut on time.
const maxWait = 2 * time.Millisecond

func (p *pacedReader[T]) Read() ([]T, error) {
	if p.start.IsZero() {
		p.start = time.Now()
	}
	if len(p.rest) == 0 {
		if p.err != nil {
			return nil, p.err
		}
		p.rest, p.err = p.r.Read()
		p.inner, p.out = len(p.rest), 0
		if len(p.rest) == 0 {
			err := p.err
			p.err = nil
			if err != nil {
				p.err = err // keep returning it
			}
			return nil, err
		}
	}
	due := int64(time.Since(p.start).Seconds()*p.rate) + 1 - p.emitted
	if due <= 0 {
		wait := time.Duration(float64(-due+1) / p.rate * float64(time.Second))
		t0 := time.Now()
		time.Sleep(min(wait, maxWait))
		p.slept += time.Since(t0)
		p.out = 0
		return nil, nil
	}
	n := int(min(due, int64(len(p.rest))))
	b := p.rest[:n:n]
	p.rest = p.rest[n:]
	p.emitted += int64(n)
	p.out = n
	return b, nil
}

// SeekSplits implements Rescalable if the inner reader does.
func (p *pacedReader[T]) SeekSplits(pos [][]byte) error {
	s, ok := p.r.(dataflow.Rescalable)
	if !ok {
		return fmt.Errorf("weir: the reader %T cannot resume a run with another parallelism: it does not implement weir.Rescalable", p.r)
	}
	p.rest, p.inner, p.out = nil, 0, 0
	return s.SeekSplits(pos)
}

func (p *pacedReader[T]) Close() error { return p.r.Close() }

// Identity implements Identified: the paced input's (pacing does not
// change the records).
func (p pacedInput[T]) Identity() string { return dataflow.Identify(p.in) }

// Counters implements Counted: the paced input's, if it counts.
func (p pacedInput[T]) Counters() map[string]int64 {
	if c, ok := p.in.(dataflow.Counted); ok {
		return c.Counters()
	}
	return nil
}
