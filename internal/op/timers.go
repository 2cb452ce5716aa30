package op

import (
	"fmt"
	"math"
	"slices"

	"github.com/weirstream/weir/internal/dataflow"
)

// Timer is a timer of a keyed process function: a time in milliseconds of
// its domain's clock. An event-time timer fires once the watermark reaches
// its time; a processing-time timer at the first epoch end at which the
// job's clock has reached it.
type Timer struct {
	Time   int64
	Domain dataflow.TimeDomain
}

// timerItem is a timer in an instance's index, with its key and the key's
// hash, which find the key's entry.
type timerItem[K comparable] struct {
	t int64
	h uint64
	k K
}

// timerHeap is a binary min-heap of one domain's timers by time: the
// instance's index of the timers that the keys' entries hold. A deleted
// timer stays in the heap until it comes up and is skipped then (its
// entry no longer holds it), so registering and deleting cost no search.
type timerHeap[K comparable] struct{ items []timerItem[K] }

func (h *timerHeap[K]) push(it timerItem[K]) {
	h.items = append(h.items, it)
	i := len(h.items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if h.items[parent].t <= h.items[i].t {
			break
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

func (h *timerHeap[K]) pop() timerItem[K] {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items[last] = timerItem[K]{} // do not pin the key
	h.items = h.items[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && h.items[l].t < h.items[m].t {
			m = l
		}
		if r < last && h.items[r].t < h.items[m].t {
			m = r
		}
		if m == i {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	return top
}

// due says whether the earliest timer's time is at or before now.
func (h *timerHeap[K]) due(now int64) bool { return len(h.items) > 0 && h.items[0].t <= now }

func (h *timerHeap[K]) reset() {
	clear(h.items)
	h.items = h.items[:0]
}

// register adds timer tm to the key of c; a timer the key has already is
// one timer.
func (p *procCore[K, S, U]) register(c *ProcessContext[K, S, U], tm Timer) {
	if p.onTimer == nil {
		p.fail(fmt.Errorf("weir: %s: its function registers a timer but has no OnTimer", p.name))
		return
	}
	e := c.entry()
	if slices.Contains(e.Timers, tm) {
		return
	}
	e.Timers = append(e.Timers, tm)
	p.live[tm.Domain]++
	p.timers[tm.Domain].push(timerItem[K]{t: tm.Time, h: c.h, k: c.key})
}

// unregister deletes timer tm of the key of c, if it has it.
func (p *procCore[K, S, U]) unregister(c *ProcessContext[K, S, U], tm Timer) {
	e := c.entry()
	if i := slices.Index(e.Timers, tm); i >= 0 {
		e.Timers = slices.Delete(e.Timers, i, i+1)
		p.live[tm.Domain]--
	}
}

// fire calls OnTimer for every timer that is due at the watermark (event
// time) or at the processing time: event-time timers first, each domain
// in time order, until none is due, so that a due timer that a firing
// timer registers fires in the same pass. In OnTimer, Timestamp is an
// event-time timer's time, or for a processing-time timer the watermark.
func (p *procCore[K, S, U]) fire() {
	for p.err == nil {
		d := dataflow.EventTime
		switch {
		case p.timers[dataflow.EventTime].due(p.wm):
		case p.timers[dataflow.ProcessingTime].due(p.now):
			d = dataflow.ProcessingTime
		default:
			return
		}
		if p.onTimer == nil { // timers restored into a function without OnTimer
			p.fail(fmt.Errorf("weir: %s: it has timers but its function has no OnTimer", p.name))
			return
		}
		it := p.timers[d].pop()
		c := &p.ctx
		*c = ProcessContext[K, S, U]{p: p, h: it.h, key: it.k}
		e := c.entry()
		tm := Timer{Time: it.t, Domain: d}
		if i := slices.Index(e.Timers, tm); i >= 0 {
			e.Timers = slices.Delete(e.Timers, i, i+1)
			p.live[d]--
			c.ts = it.t
			if d == dataflow.ProcessingTime {
				c.ts = p.wm
			}
			c.at = p.ttl.clock(c.ts, p.now)
			p.onTimer(c, tm)
		}
		p.done(c)
	}
}

// reindex rebuilds the timer index and the earliest possible expiry from
// the keys' entries: after a restore, or once deleted timers crowd the
// index.
func (p *procCore[K, S, U]) reindex() error {
	for d := range p.timers {
		p.timers[d].reset()
		p.live[d] = 0
	}
	p.ttl.next = math.MaxInt64
	var err error
	p.table.Range(func(h uint64, k K, e *procEntry[S]) bool {
		for _, tm := range e.Timers {
			if tm.Domain > dataflow.ProcessingTime {
				err = fmt.Errorf("weir: %s: restoring state: a timer of unknown domain %v", p.name, tm.Domain)
				return false
			}
			p.timers[tm.Domain].push(timerItem[K]{t: tm.Time, h: h, k: k})
			p.live[tm.Domain]++
		}
		if e.Has {
			p.ttl.noteLife(e.Last)
		}
		return true
	})
	return err
}

// compact rebuilds the timer index when deleted timers outnumber the live
// ones by far.
func (p *procCore[K, S, U]) compact() {
	for d := range p.timers {
		if len(p.timers[d].items) > 2*p.live[d]+1024 {
			if err := p.reindex(); err != nil {
				p.fail(err)
			}
			return
		}
	}
}
