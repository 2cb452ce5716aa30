package critical

import (
	"cmp"
	"slices"
	"sort"

	"github.com/weirstream/weir/internal/trace"
)

// Index is a trace ready to be cut into windows: each worker's events in
// time order and the message edges matched.
type Index struct {
	T *trace.Trace
	// ev holds the events ordered by worker, then time; span[w] is the
	// range of worker w's. A worker's events are made not to overlap (a
	// start before the previous end is moved to it).
	ev   []trace.Event
	span [][2]int
	msgs []message // by send end
	// msgOf[i] is 1 + the message event i is an end of, or 0.
	msgOf  []int32
	maxLen int64 // the longest transfer
	lo, hi int64 // the trace's span
	// Dropped counts the message edges received before they were sent.
	Dropped int
}

type message struct {
	send, recv int32 // event indices
	t1, t2     int64 // the send's end, the recv's start
}

// NewIndex indexes t, which it does not change.
func NewIndex(t *trace.Trace) *Index {
	x := &Index{T: t, ev: slices.Clone(t.Events), span: make([][2]int, len(t.Workers))}
	slices.SortStableFunc(x.ev, func(a, b trace.Event) int {
		return cmp.Or(cmp.Compare(a.Worker, b.Worker), cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End))
	})
	x.lo, x.hi = 0, 0
	for i := 0; i < len(x.ev); {
		w := x.ev[i].Worker
		j := i
		prev := x.ev[i].Start
		for ; j < len(x.ev) && x.ev[j].Worker == w; j++ {
			e := &x.ev[j]
			e.Start = max(e.Start, prev)
			e.End = max(e.End, e.Start)
			prev = e.End
		}
		if int(w) < len(x.span) {
			x.span[w] = [2]int{i, j}
		}
		if i == 0 || x.ev[i].Start < x.lo {
			x.lo = x.ev[i].Start
		}
		x.hi = max(x.hi, prev)
		i = j
	}
	x.match()
	return x
}

// Span returns the time from the first event's start to the last one's
// end.
func (x *Index) Span() (lo, hi int64) { return x.lo, x.hi }

// match finds the message edges.
func (x *Index) match() {
	ms, dropped := trace.Match(x.ev)
	x.Dropped = dropped
	x.msgOf = make([]int32, len(x.ev))
	x.msgs = make([]message, len(ms))
	for i, m := range ms {
		x.msgs[i] = message{send: int32(m.Send), recv: int32(m.Recv), t1: x.ev[m.Send].End, t2: x.ev[m.Recv].Start}
		x.msgOf[m.Send], x.msgOf[m.Recv] = int32(i+1), int32(i+1)
		x.maxLen = max(x.maxLen, x.msgs[i].t2-x.msgs[i].t1)
	}
}

// inWindow returns worker w's events that lie in [ts, te): those that
// overlap it, and those of no length at a time in it.
func (x *Index) inWindow(w int, ts, te int64) (lo, hi int) {
	s := x.span[w]
	ev := x.ev[s[0]:s[1]]
	lo = sort.Search(len(ev), func(i int) bool { return ev[i].End >= ts })
	for lo < len(ev) && ev[lo].End == ts && ev[lo].Start < ts {
		lo++
	}
	hi = lo + sort.Search(len(ev)-lo, func(i int) bool { return ev[lo+i].Start >= te })
	return s[0] + lo, s[0] + hi
}

// messages returns the message edges that lie in [ts, te).
func (x *Index) messages(ts, te int64) []int {
	lo := sort.Search(len(x.msgs), func(i int) bool { return x.msgs[i].t1 >= ts-x.maxLen })
	var out []int
	for i := lo; i < len(x.msgs) && x.msgs[i].t1 < te; i++ {
		m := x.msgs[i]
		if m.t2 > ts || m.t1 >= ts {
			out = append(out, i)
		}
	}
	return out
}
