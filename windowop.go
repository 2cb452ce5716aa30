package weir

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/state"
	"github.com/weirstream/weir/internal/window"
)

// Aggregate folds each window of each key with agg. Records later than the
// allowed lateness go to ws.Late().
func Aggregate[K comparable, T, A, R any](ws WindowedStream[K, T], agg Aggregator[T, A, R]) Stream[WindowResult[K, R]] {
	j := ws.k.s.job
	c := opOptions(ws.cfg.opts)
	n := j.add(&node{name: c.name, op: "window(" + ws.spec.String() + ")", kind: plan.Inboxed, state: plan.Keyed, sel: plan.AnyNumber, key: ws.k.name, par: c.parallelism, parSet: c.parSet})
	n.params = fmt.Sprintf("lateness %dms, key, record, accumulator, result: %s", ws.spec.Lateness, typeList(reflect.TypeFor[K](), reflect.TypeFor[T](), reflect.TypeFor[A](), reflect.TypeFor[R]()))
	n.ports = []func([]any) any{
		func(outs []any) any { return combine[WindowResult[K, R]](outs) },
		func(outs []any) any { return combine[T](outs) },
	}
	n.inputs = []inputEdge{keyedInput(ws.k)}
	result := Stream[WindowResult[K, R]]{job: j, node: n, timed: ws.k.s.timed}
	strat, err := j.strategy(agg.Merge != nil && ws.spec.Kind != window.Session)
	if err != nil {
		j.fail(err)
		return result
	}
	st := &edgeStats{name: n.name, strategy: strat, log: j.cfg.logger}
	if st.log == nil {
		st.log = slog.Default()
	}
	j.partStats = append(j.partStats, st)
	n.op += " " + strat.String()
	key := ws.k.key
	var micro *microShared[K, T, A]
	if strat == partition.PKG || strat == partition.Prompt {
		micro = newMicroShared(j, st, strat, key, ws.spec, agg.Init, agg.Add, agg.Merge)
	}
	n.inputs[0].wire = func() (wire, error) {
		if strat == partition.PKG || strat == partition.Prompt {
			return nil, fmt.Errorf("partitioning %s runs in one process; use hash or roundrobin", strat)
		}
		return newKeyedWire[K, T, A](strat == partition.RoundRobin)
	}
	n.inputs[0].exchange = func(x exchangeCtx) any {
		var p pusher[T]
		switch strat {
		case partition.Hash:
			p = newKeyEx[K, T](key, j.cfg.keyGroups, x.outlets, j.cfg.batchSize, x.dist).withStats(st, x.sender, x.senders)
		case partition.RoundRobin:
			c := newCombineEx[K, T, A](key, j.cfg.keyGroups, x.outlets, j.cfg.batchSize, ws.spec, agg.Init, agg.Add, x.dist)
			c.raw.withStats(st, x.sender, x.senders)
			if x.from > 0 {
				// Restored: the combiner does not know the watermark the
				// window has; its first epoch goes raw, so that the window
				// decides what is late.
				c.off = 1
			}
			p = c
		default:
			p = newMicroEx(micro, x, j)
		}
		return &guard[T]{name: x.name, p: p}
	}
	if err := ws.spec.Validate(); err != nil {
		j.fail(fmt.Errorf("weir: %s: %w", n.name, err))
		return result
	}
	if ws.spec.NeedsTime() && !ws.k.s.timed {
		j.fail(fmt.Errorf("weir: %s: %s windows need event time; assign it with EventTime", n.name, ws.spec))
		return result
	}
	if agg.Add == nil {
		j.fail(fmt.Errorf("weir: %s: aggregator has no Add", n.name))
		return result
	}
	if ws.spec.Kind == window.Session && agg.Merge == nil {
		j.fail(fmt.Errorf("weir: %s: session windows need an aggregator with Merge", n.name))
		return result
	}
	if agg.Result == nil {
		if _, ok := any((*A)(nil)).(*R); !ok {
			j.fail(fmt.Errorf("weir: %s: aggregator has no Result and %T is not %T", n.name, *new(A), *new(R)))
			return result
		}
		agg.Result = func(a A) R { return any(a).(R) }
	}
	if ws.late.node != nil {
		j.fail(errors.New("weir: a windowed stream can be aggregated only once"))
		return result
	}
	ws.late.node = n
	held := newTimeRange() // of the results; the late records pass their times on
	n.times = []*timeRange{held, nil}
	holdTimes(ws.k.s.node, ws.k.s.port, ws.spec)
	late := &atomic.Int64{}
	j.lateCounters = append(j.lateCounters, lateCounter{name: n.name, n: late})
	n.newTask = func(tc taskCtx, outs []any) (runtime.InputTask, error) {
		inst := tc.inst
		w := &windowTask[K, T, A, R]{
			name: n.name, spec: ws.spec, held: *held, agg: agg, size: j.cfg.batchSize,
			out: outs[0].(pusher[WindowResult[K, R]]), late: outs[1].(pusher[T]),
			next: math.MaxInt64,
			wm:   progress.NoWatermark, lateCount: late,
		}
		table, err := newStore[K, window.Set[A]](j, n.name, inst)
		if err != nil {
			return nil, err
		}
		w.table = table
		if micro != nil {
			w.micro = newMicroTask(micro, inst, microOwner[K, T, A](w), func() int64 { return w.wm })
		}
		w.lo, w.hi = ws.spec.Range()
		tc.saves(n.name, w)
		return w, nil
	}
	return result
}

// Late returns the records that arrived after their windows' allowed
// lateness, once the windowed stream has been aggregated. They are also
// counted in the job's Metrics.
func (ws WindowedStream[K, T]) Late() Stream[T] {
	if ws.late.node == nil {
		j := ws.k.s.job
		j.fail(errors.New("weir: Late called before the windowed stream was aggregated"))
		return Stream[T]{job: j}
	}
	return Stream[T]{job: ws.k.s.job, node: ws.late.node, port: 1, timed: ws.k.s.timed}
}

// Reduce combines the records of each window of each key with f. The
// order in which records reach f is not defined (instances run in parallel
// and records are pre-aggregated before the exchange), so f must be
// associative and commutative.
func Reduce[K comparable, T any](ws WindowedStream[K, T], f func(a, b T) T) Stream[WindowResult[K, T]] {
	type acc struct {
		v  T
		ok bool
	}
	return Aggregate(ws, Aggregator[T, acc, T]{
		Add: func(a acc, v T) acc {
			if !a.ok {
				return acc{v, true}
			}
			return acc{f(a.v, v), true}
		},
		Merge: func(a, b acc) acc {
			switch {
			case !a.ok:
				return b
			case !b.ok:
				return a
			}
			return acc{f(a.v, b.v), true}
		},
		Result: func(a acc) T { return a.v },
	})
}

// Count counts the records of each window of each key.
func Count[K comparable, T any](ws WindowedStream[K, T]) Stream[WindowResult[K, int64]] {
	return Aggregate(ws, Aggregator[T, int64, int64]{
		Add:    func(a int64, _ T) int64 { return a + 1 },
		Merge:  func(a, b int64) int64 { return a + b },
		Result: func(a int64) int64 { return a },
	})
}

type windowTask[K comparable, T, A, R any] struct {
	name      string
	spec      window.Spec
	lo, hi    int64     // the times spec can hold
	held      timeRange // the times results may have
	agg       Aggregator[T, A, R]
	size      int
	out       pusher[WindowResult[K, R]]
	late      pusher[T]
	table     keyedStore[K, window.Set[A]]
	next      int64 // the watermark at which some window needs attention
	wm        int64
	tc        window.TumblingCache
	lateCount *atomic.Int64
	outB      batch[WindowResult[K, R]]
	lateB     batch[T]
	// micro, under the prompt and pkg strategies, is this instance's part
	// of the micro-batch exchange's rounds, run at every epoch's end.
	micro *microTask[K, T, A]
}

func (w *windowTask[K, T, A, R]) Batch(port int, b any) error {
	if pb, ok := b.(*pbatch[K, A]); ok {
		w.merge(pb)
		return nil
	}
	kb := b.(*kbatch[K, T])
	for i := range kb.recs {
		w.add(&kb.recs[i])
	}
	kb.release()
	return w.flushLate()
}

// flushLate pushes the late records gathered so far.
func (w *windowTask[K, T, A, R]) flushLate() error {
	if len(w.lateB.v) > 0 {
		err := w.late.push(&w.lateB)
		clear(w.lateB.v) // the records may point into input buffers
		w.lateB.v, w.lateB.ts = w.lateB.v[:0], w.lateB.ts[:0]
		return err
	}
	return nil
}

func (w *windowTask[K, T, A, R]) add(r *krec[K, T]) {
	spec := &w.spec
	if r.ts < w.lo || r.ts > w.hi {
		panic(badWindowTime(r.ts, *spec))
	}
	if spec.Kind == window.Session {
		set := w.table.Upsert(r.h, r.k)
		win := set.AddSession(r.ts, spec.Gap, spec.Lateness, w.wm, w.agg.Init, w.agg.Merge)
		if win == nil {
			if len(set.W) == 0 {
				w.table.Delete(r.h, r.k)
			}
			w.toLate(r)
			return
		}
		win.Acc = w.agg.Add(win.Acc, r.v)
		w.next = min(w.next, window.Due(win, spec.Lateness))
		return
	}
	if spec.Kind == window.Tumbling {
		// The common case, without the closure of Assign.
		start, end, _ := w.tc.Window(r.ts, spec.Size) // exact: r.ts is in range
		if spec.Late(end, w.wm) {
			w.toLate(r)
			return
		}
		w.addTo(r, start, end)
		return
	}
	// Sliding and global: a record is late only if all its windows are.
	late := true
	spec.Assign(r.ts, func(start, end int64) {
		if !spec.Late(end, w.wm) {
			late = false
			w.addTo(r, start, end)
		}
	})
	if late {
		w.toLate(r)
	}
}

// merge folds pre-aggregated partials into the windows. A partial is never
// late: its sender combined only records whose windows were not past
// cleanup at its own watermark, which is at least this operator's.
func (w *windowTask[K, T, A, R]) merge(pb *pbatch[K, A]) {
	for i := range pb.recs {
		w.mergeOne(&pb.recs[i])
	}
	pb.release()
}

// mergeOne folds one partial into its window.
func (w *windowTask[K, T, A, R]) mergeOne(p *partial[K, A]) {
	if w.spec.Late(p.end, w.wm) {
		panic("weir: a pre-aggregated partial arrived after its window's cleanup")
	}
	set := w.table.Upsert(p.h, p.k)
	win := set.Find(p.start, p.end)
	if win == nil {
		// A new window takes the partial as it is: Merge is only ever
		// given two accumulators that have seen records.
		set.W = append(set.W, window.Win[A]{Start: p.start, End: p.end, Acc: p.acc})
		win = &set.W[len(set.W)-1]
	} else {
		win.Acc = w.agg.Merge(win.Acc, p.acc)
		win.Touch()
	}
	w.next = min(w.next, window.Due(win, w.spec.Lateness))
}

// addTo adds r to the window [start, end).
func (w *windowTask[K, T, A, R]) addTo(r *krec[K, T], start, end int64) {
	set := w.table.Upsert(r.h, r.k)
	win := set.Get(start, end, w.agg.Init)
	win.Acc = w.agg.Add(win.Acc, r.v)
	win.Touch()
	w.next = min(w.next, window.Due(win, w.spec.Lateness))
}

func (w *windowTask[K, T, A, R]) toLate(r *krec[K, T]) {
	w.lateCount.Add(1)
	w.lateB.v = append(w.lateB.v, r.v)
	w.lateB.ts = append(w.lateB.ts, r.ts)
}

func (w *windowTask[K, T, A, R]) Mark(m progress.Marker) error {
	if w.micro != nil {
		// The epoch's records arrive now, before its watermark applies.
		if err := w.micro.run(m); err != nil {
			return err
		}
		if err := w.flushLate(); err != nil {
			return err
		}
	}
	if m.Watermark > w.wm {
		w.wm = m.Watermark
	}
	if w.wm >= w.next {
		if err := w.fire(); err != nil {
			return err
		}
	}
	if f, ok := w.table.(flusher); ok {
		if err := f.flush(); err != nil {
			return err
		}
	}
	if err := w.out.mark(m); err != nil {
		return err
	}
	return w.late.mark(m)
}

func (w *windowTask[K, T, A, R]) fire() error {
	next := int64(math.MaxInt64)
	var err error
	w.table.DeleteFunc(func(k K, set *window.Set[A]) bool {
		n := set.Fire(w.wm, w.spec.Lateness, func(win *window.Win[A]) {
			if !w.held.holds(win.End-1) && err == nil {
				err = fmt.Errorf("weir: %s: the result of window [%d, %d) of key %s has event time %d, outside the range the windows downstream can hold [%d, %d]",
					w.name, win.Start, win.End, showRecord(k), win.End-1, w.held.lo, w.held.hi)
			}
			w.outB.v = append(w.outB.v, WindowResult[K, R]{Key: k, Start: win.Start, End: win.End, Value: w.agg.Result(win.Acc)})
			w.outB.ts = append(w.outB.ts, win.End-1)
			if len(w.outB.v) >= w.size && err == nil {
				err = w.flush()
			}
		})
		next = min(next, n)
		return len(set.W) == 0
	})
	w.next = next
	if err != nil {
		return err
	}
	return w.flush()
}

func (w *windowTask[K, T, A, R]) flush() error {
	if len(w.outB.v) == 0 {
		return nil
	}
	err := w.out.push(&w.outB)
	clear(w.outB.v)
	w.outB.v, w.outB.ts = w.outB.v[:0], w.outB.ts[:0]
	return err
}

// newKeyedTable makes the state table of a keyed operator. String keys are
// cloned when first stored: records often hold substrings of large input
// buffers, which long-lived state must not pin.
type keyedTable[K comparable, V any] = state.Table[K, V]

func newKeyedTable[K comparable, V any]() *state.Table[K, V] {
	t := state.NewTable[K, V](0)
	if reflect.TypeFor[K]().Kind() == reflect.String {
		t.CloneKeys(func(k K) K {
			s := strings.Clone(*(*string)(unsafe.Pointer(&k)))
			return *(*K)(unsafe.Pointer(&s))
		})
	}
	return t
}
