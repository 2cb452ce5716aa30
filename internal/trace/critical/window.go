package critical

import (
	"github.com/weirstream/weir/internal/trace"
)

// Activity is one edge of a window's activity graph: a worker's activity
// truncated to the window, a gap, or a message edge.
type Activity struct {
	// Worker is the worker; for a message edge, the sender, and To the
	// receiver (To is Worker otherwise).
	Worker, To int
	Kind       trace.Kind
	// Op indexes the trace's operator table: the event's own for
	// Processing, Alignment and CheckpointIO, else the worker's.
	Op           int
	Gap, Message bool
	Start, End   int64 // truncated to the window
	// Busy is the time that counts as busy: a recorded activity's length
	// unless it waits; for a message edge, the length of its Send and
	// Recv in the window (also counted on their own workers).
	Busy int64
	// CP is the activity's critical participation in the window.
	CP       float64
	from, to int32 // nodes
}

// Window is the activity graph of [Start, End) with each activity's CP.
type Window struct {
	Start, End int64
	// Paths is N, the number of critical paths (+Inf beyond float64).
	Paths      float64
	Activities []Activity
	// Dropped counts message edges through the window that were left
	// out: to keep the graph acyclic with equal clocks.
	Dropped int
}

// chain builds worker w's nodes and activities in [ts, te).
type builder struct {
	x        *Index
	ts, te   int64
	nodes    int32
	acts     []Activity
	starts   []int32
	ends     []int32
	nodeOf   map[int32]int32 // a message's send event: the node after it; its recv event: the node before
	startOf  map[int]int32   // worker -> start node
	endOf    map[int]int32   // worker -> end node
	inWindow map[int]bool
}

func (b *builder) chain(w int, lo, hi int) {
	start := b.nodes
	b.nodes++
	b.starts = append(b.starts, start)
	b.startOf[w] = start
	cur, node := b.ts, start
	op := int(b.x.T.Workers[w].Op)
	seg := func(a Activity) {
		a.Worker, a.To, a.from, a.to = w, w, node, b.nodes
		b.acts = append(b.acts, a)
		node = b.nodes
		b.nodes++
		cur = a.End
	}
	for i := lo; i < hi; i++ {
		e := b.x.ev[i]
		s, en := max(e.Start, b.ts), min(e.End, b.te)
		if s > cur {
			seg(Activity{Gap: true, Op: op, Start: cur, End: s})
		}
		a := Activity{Kind: e.Kind, Op: op, Start: s, End: en}
		if e.Kind == trace.Processing || e.Kind == trace.Alignment || e.Kind == trace.CheckpointIO {
			a.Op = int(e.Op)
		}
		if !e.Kind.Waiting() {
			a.Busy = en - s
		}
		if b.x.msgOf[i] != 0 {
			if e.Kind == trace.Send {
				b.nodeOf[int32(i)] = b.nodes
			} else {
				b.nodeOf[int32(i)] = node
			}
		}
		seg(a)
	}
	if cur < b.te || node == start {
		seg(Activity{Gap: true, Op: op, Start: cur, End: b.te})
	}
	b.ends = append(b.ends, node)
	b.endOf[w] = node
}

// Window builds the activity graph of [ts, te) and computes its CP.
func (x *Index) Window(ts, te int64) Window {
	b := &builder{x: x, ts: ts, te: te, nodeOf: map[int32]int32{}, startOf: map[int]int32{}, endOf: map[int]int32{}}
	msgs := x.messages(ts, te)
	need := map[int]bool{}
	for _, k := range msgs {
		m := x.msgs[k]
		need[int(x.ev[m.send].Worker)], need[int(x.ev[m.recv].Worker)] = true, true
	}
	for w := range x.span {
		lo, hi := x.inWindow(w, ts, te)
		if lo < hi || need[w] {
			b.chain(w, lo, hi)
		}
	}
	for _, k := range msgs {
		m := x.msgs[k]
		from, ok := b.nodeOf[m.send]
		if !ok {
			from = b.startOf[int(x.ev[m.send].Worker)]
		}
		to, ok := b.nodeOf[m.recv]
		if !ok {
			to = b.endOf[int(x.ev[m.recv].Worker)]
		}
		busy := func(i int32) int64 {
			e := x.ev[i]
			return max(0, min(e.End, te)-max(e.Start, ts))
		}
		b.acts = append(b.acts, Activity{Worker: int(x.ev[m.send].Worker), To: int(x.ev[m.recv].Worker), Kind: trace.Send,
			Op: -1, Message: true, Start: max(m.t1, ts), End: min(m.t2, te), Busy: busy(m.send) + busy(m.recv), from: from, to: to})
	}
	win := Window{Start: ts, End: te, Activities: b.acts}
	win.Dropped = solve(&win, int(b.nodes), b.starts, b.ends)
	return win
}

// capacity reports whether paths may go through a.
func (a *Activity) capacity() bool { return a.Message || a.Gap || !a.Kind.Waiting() }
