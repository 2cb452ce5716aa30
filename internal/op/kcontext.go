package op

import (
	"math"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/progress"
)

// procStore is a keyed store that also returns the keys it stores, which
// the timer index keeps.
type procStore[K comparable, V any] interface {
	keyedStore[K, V]
	UpsertKey(h uint64, k K) (*V, K)
}

// procCore is one instance of a keyed process operator (KeyedProcess,
// CoProcess) but for its inputs: the keys' entries, the timer index, the
// watermark and processing time, the state TTL and the outputs. It is used
// by the instance's goroutine only. An error of the function's making
// (a timer without OnTimer, an undeclared side output, a failed push) is
// kept and returned by the next Batch or Mark.
type procCore[K comparable, S, U any] struct {
	name    string
	table   procStore[K, procEntry[S]]
	timers  [2]timerHeap[K] // by domain
	live    [2]int          // timers the entries hold, by domain
	onTimer func(*ProcessContext[K, S, U], Timer)
	wm, now int64
	clock   func() int64
	ttl     stateTTL
	timed   bool
	out     dataflow.Pusher[U]
	outB    dataflow.Batch[U]
	size    int
	sides   []sideSlot
	err     error
	ctx     ProcessContext[K, S, U]
}

// ProcessContext is what a keyed process function is called with: the
// key, its state and timers, the time, and the outputs. It is valid only
// during the call it is passed to.
type ProcessContext[K comparable, S, U any] struct {
	p   *procCore[K, S, U]
	h   uint64
	key K
	e   *procEntry[S] // nil until the call needs the key's entry
	ts  int64
	// at is the time at which the call finds state expired: the
	// watermark or, in OnTimer of an event-time timer, its time; or the
	// processing time.
	at int64
}

// Key is the key of the record or timer being processed.
func (c *ProcessContext[K, S, U]) Key() K { return c.key }

// entry finds (or makes) the key's entry and takes the key as the table
// stores it.
func (c *ProcessContext[K, S, U]) entry() *procEntry[S] {
	if c.e == nil {
		c.e, c.key = c.p.table.UpsertKey(c.h, c.key)
	}
	return c.e
}

// State is the key's state, which the function may read and change: the
// zero value the first time, after ClearState and after it expired (see
// StateTTL). Calling State touches the state for its time-to-live.
func (c *ProcessContext[K, S, U]) State() *S {
	p := c.p
	return c.entry().touch(&p.ttl, p.ttl.clock(c.ts, p.now), c.at)
}

// ClearState drops the key's state (its timers stay).
func (c *ProcessContext[K, S, U]) ClearState() { c.entry().clear() }

// Timestamp is the event time of the record being processed, or in
// OnTimer the time of an event-time timer (for a processing-time timer,
// the watermark). On a stream without event time it is math.MinInt64
// for records.
func (c *ProcessContext[K, S, U]) Timestamp() int64 { return c.ts }

// Watermark is the instance's current watermark: math.MinInt64 before
// the first, math.MaxInt64 once the input has ended.
func (c *ProcessContext[K, S, U]) Watermark() int64 { return c.p.wm }

// ProcessingTime is the job's clock in Unix milliseconds, read once per
// batch of records and at every epoch end.
func (c *ProcessContext[K, S, U]) ProcessingTime() int64 { return c.p.now }

// Emit outputs u with the event time Timestamp.
func (c *ProcessContext[K, S, U]) Emit(u U) {
	p := c.p
	p.outB.V = append(p.outB.V, u)
	if p.timed {
		p.outB.Ts = append(p.outB.Ts, c.ts)
	}
	if len(p.outB.V) >= p.size {
		p.flushOut()
	}
}

// RegisterEventTimer makes OnTimer run for this key once the watermark
// reaches t. A key has at most one timer per time and domain.
func (c *ProcessContext[K, S, U]) RegisterEventTimer(t int64) {
	c.p.register(c, Timer{Time: t, Domain: dataflow.EventTime})
}

// DeleteEventTimer deletes the key's event-time timer at t, if any.
func (c *ProcessContext[K, S, U]) DeleteEventTimer(t int64) {
	c.p.unregister(c, Timer{Time: t, Domain: dataflow.EventTime})
}

// RegisterProcessingTimer makes OnTimer run for this key at the first
// epoch end at which the job's clock (Unix milliseconds) has reached t.
func (c *ProcessContext[K, S, U]) RegisterProcessingTimer(t int64) {
	c.p.register(c, Timer{Time: t, Domain: dataflow.ProcessingTime})
}

// DeleteProcessingTimer deletes the key's processing-time timer at t, if
// any.
func (c *ProcessContext[K, S, U]) DeleteProcessingTimer(t int64) {
	c.p.unregister(c, Timer{Time: t, Domain: dataflow.ProcessingTime})
}

func (p *procCore[K, S, U]) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

// done ends a call for c's key: an entry left with neither state nor
// timers is deleted.
func (p *procCore[K, S, U]) done(c *ProcessContext[K, S, U]) {
	if e := c.e; e != nil && !e.Has && len(e.Timers) == 0 {
		p.table.Delete(c.h, c.key)
	}
	c.e = nil
}

// records calls f for each record of kb.
func records[K comparable, T, S, U any](p *procCore[K, S, U], kb *dataflow.Kbatch[K, T], f func(*ProcessContext[K, S, U], T)) error {
	p.now = p.clock()
	at := p.ttl.clock(p.wm, p.now)
	c := &p.ctx
	for i := range kb.Recs {
		r := &kb.Recs[i]
		*c = ProcessContext[K, S, U]{p: p, h: r.H, key: r.K, ts: r.Ts, at: at}
		if !p.timed {
			c.ts = math.MinInt64
		}
		f(c, r.V)
		p.done(c)
		if p.err != nil {
			break
		}
	}
	kb.Release()
	p.flush()
	return p.err
}

// Mark ends an epoch: it takes the marker's watermark and the clock, fires
// the timers due, drops expired state, writes a disk store's epoch, pushes
// the outputs and passes the marker on.
func (p *procCore[K, S, U]) Mark(m progress.Marker) error {
	p.wm = max(p.wm, m.Watermark)
	p.now = p.clock()
	p.fire()
	expireEntries(p.table, &p.ttl, p.ttl.clock(p.wm, p.now))
	p.compact()
	if f, ok := p.table.(flusher); ok && p.err == nil {
		p.err = f.Flush()
	}
	p.flush()
	if p.err != nil {
		return p.err
	}
	if err := p.out.Mark(m); err != nil {
		return err
	}
	for _, s := range p.sides {
		if err := s.buf.mark(m); err != nil {
			return err
		}
	}
	return nil
}

// flush pushes the outputs gathered so far.
func (p *procCore[K, S, U]) flush() {
	p.flushOut()
	for _, s := range p.sides {
		if err := s.buf.flush(); err != nil {
			p.fail(err)
		}
	}
}

func (p *procCore[K, S, U]) flushOut() {
	if err := pushOut(p.out, &p.outB); err != nil {
		p.fail(err)
	}
}

func (p *procCore[K, S, U]) SnapshotKeyed(op string, groups int, out []checkpoint.StateBlob) ([]checkpoint.StateBlob, error) {
	return snapshotTable[K, procEntry[S]](p.table, p.wm, op, groups, out)
}

// RestoreKeyed takes the entries of the key groups the instance owns,
// with their timers, and the watermark they were saved at.
func (p *procCore[K, S, U]) RestoreKeyed(blobs [][]byte) error {
	wm, err := restoreTable[K, procEntry[S]](p.table, blobs, nil)
	if err != nil {
		return err
	}
	if len(blobs) > 0 {
		p.wm = max(p.wm, wm)
	}
	if err := p.reindex(); err != nil {
		return err
	}
	if f, ok := p.table.(flusher); ok {
		return f.Flush()
	}
	return nil
}

func (p *procCore[K, S, U]) Watermark() int64          { return p.wm }
func (p *procCore[K, S, U]) RestoreWatermark(wm int64) { p.wm = max(p.wm, wm) }
