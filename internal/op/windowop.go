package op

import (
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/exchange"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/prompt"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/state"
	"github.com/weirstream/weir/internal/window"
)

// Aggregate folds each window of each key with agg. Records later than the
// allowed lateness go to ws.Late().
func Aggregate[K comparable, T, A, R any](ws WindowedStream[K, T], agg Aggregator[T, A, R]) Stream[WindowResult[K, R]] {
	j := ws.k.s.job
	c := dataflow.OpOptions(ws.cfg.opts)
	kind := ws.cfg.op
	if kind == "" {
		kind = "window"
	}
	n := j.Add(&dataflow.Node{Name: c.Name, Op: kind + "(" + ws.spec.String() + ")", Kind: plan.Inboxed, State: plan.Keyed, Sel: plan.AnyNumber, Key: ws.k.name, Par: c.Parallelism, ParSet: c.ParSet})
	n.Params = fmt.Sprintf("lateness %dms, key, record, accumulator, result: %s", ws.spec.Lateness, dataflow.TypeList(reflect.TypeFor[K](), reflect.TypeFor[T](), reflect.TypeFor[A](), reflect.TypeFor[R]()))
	n.Ports = []func([]any) any{
		func(outs []any) any { return dataflow.Combine[WindowResult[K, R]](outs) },
		func(outs []any) any { return dataflow.Combine[T](outs) },
	}
	result := Stream[WindowResult[K, R]]{job: j, node: n, timed: ws.k.s.timed}
	refuseOptions(j, n.Name, c, 0)
	strat, err := j.Strategy(agg.Merge != nil && ws.spec.Kind != window.Session)
	if err != nil {
		j.Fail(err)
		return result
	}
	if strat == partition.RoundRobin && dataflow.IdleUpstream(ws.k.s.node) {
		// A sender's own watermark may be behind the window's, which left
		// it out while it was idle: the window decides what is late.
		strat = partition.Hash
	}
	st := &exchange.EdgeStats{Name: n.Name, Strategy: strat, Auto: strat == partition.RoundRobin && j.Auto(), Log: j.Cfg.Logger}
	if st.Log == nil {
		st.Log = slog.Default()
	}
	j.PartStats = append(j.PartStats, st)
	n.Op += " " + strat.String()
	var micro *prompt.MicroShared[K, T, A]
	if strat == partition.PKG || strat == partition.Prompt {
		if procs := j.Processes(); n.ParSet && n.Par < procs {
			j.Fail(fmt.Errorf("weir: %s: Parallelism(%d) under partitioning %s: the micro-batch rounds need an instance in each of the %d processes", n.Name, n.Par, strat, procs))
			return result
		}
		micro = prompt.NewMicroShared(j, st, strat, ws.k.key, ws.spec, agg.Init, agg.Add, agg.Merge, time.Now)
		if !dataflow.IdleUpstream(ws.k.s.node) {
			// Counting deposits decide lateness at the sender; an idle
			// sender's watermark may be behind the window's, which left
			// it out while it was idle.
			micro.Counting(agg.addN)
		}
	}
	n.Inputs = []dataflow.InputEdge{windowInput(ws, agg, strat, st, micro)}
	if err := checkAggregate(n.Name, ws, &agg); err != nil {
		j.Fail(err)
		return result
	}
	ws.late.node = n
	held := dataflow.NewTimeRange() // of the results; the late records pass their times on
	n.Times = []*dataflow.TimeRange{held, nil}
	dataflow.HoldTimes(ws.k.s.node, ws.k.s.port, ws.spec)
	late := &atomic.Int64{}
	j.LateCounters = append(j.LateCounters, dataflow.LateCounter{Name: n.Name, N: late})
	n.NewTask = func(tc dataflow.TaskCtx, outs []any) (runtime.InputTask, error) {
		inst := tc.Inst
		table, err := newStore[K, window.Set[A]](j, n.Name, inst)
		if err != nil {
			return nil, err
		}
		w := &windowTask[K, T, A, R]{agg: agg, late: outs[1].(dataflow.Pusher[T]), lateCount: late,
			windowed: newWindowed[K, A](n.Name, ws.spec, *held, j.Cfg.BatchSize, outs[0].(dataflow.Pusher[WindowResult[K, R]]), table),
		}
		if micro != nil {
			table := j.Routing(tc.Par)
			if tc.View != nil {
				table = tc.View.Table()
			}
			pl := prompt.Placement{Table: table, Schedule: j.Schedule(tc.Par), Done: tc.Done,
				Name: n.Name, Posts: tc.Posts, Self: tc.Self, ProcOf: tc.ProcOf}
			if w.micro, err = prompt.NewMicroTask(micro, inst, prompt.MicroOwner[K, T, A](w), func() int64 { return w.wm }, pl); err != nil {
				return nil, err
			}
		}
		w.lo, w.hi = ws.spec.Range()
		tc.Saves(n.Name, w)
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
		j.Fail(errors.New("weir: Late called before the windowed stream was aggregated"))
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
		addN:   func(a, n int64) int64 { return a + n },
	})
}

type windowTask[K comparable, T, A, R any] struct {
	windowed[K, A, WindowResult[K, R]]
	lo, hi    int64 // the times spec can hold
	agg       Aggregator[T, A, R]
	late      dataflow.Pusher[T]
	tc        window.TumblingCache
	lateCount *atomic.Int64
	lateB     dataflow.Batch[T]
	// micro, under the prompt and pkg strategies, is this instance's part
	// of the micro-batch exchange's rounds, run at every epoch's end.
	micro *prompt.MicroTask[K, T, A]
}

// Round gives the runtime the figures of the micro-batch rounds, whose
// records reach the instance in its markers (runtime.RoundTask).
func (w *windowTask[K, T, A, R]) Round() (int64, time.Duration) {
	if w.micro == nil {
		return 0, 0
	}
	return w.micro.Round()
}

func (w *windowTask[K, T, A, R]) Batch(port int, b any) error {
	if pb, ok := b.(*exchange.Pbatch[K, A]); ok {
		w.Merge(pb)
		return nil
	}
	kb := b.(*dataflow.Kbatch[K, T])
	for i := range kb.Recs {
		w.Add(&kb.Recs[i])
	}
	kb.Release()
	return w.flushLate()
}

// flushLate pushes the late records gathered so far.
func (w *windowTask[K, T, A, R]) flushLate() error {
	if len(w.lateB.V) > 0 {
		err := w.late.Push(&w.lateB)
		clear(w.lateB.V) // the records may point into input buffers
		w.lateB.V, w.lateB.Ts = w.lateB.V[:0], w.lateB.Ts[:0]
		return err
	}
	return nil
}

func (w *windowTask[K, T, A, R]) Add(r *dataflow.Krec[K, T]) {
	spec := &w.spec
	if r.Ts < w.lo || r.Ts > w.hi {
		panic(dataflow.BadWindowTime(r.Ts, *spec))
	}
	if spec.Kind == window.Session {
		set := w.table.Upsert(r.H, r.K)
		win := set.AddSession(r.Ts, spec.Gap, spec.Lateness, w.wm, w.agg.Init, w.agg.Merge)
		if win == nil {
			if len(set.W) == 0 {
				w.table.Delete(r.H, r.K)
			}
			w.toLate(r)
			return
		}
		win.Acc = w.agg.Add(win.Acc, r.V)
		w.due(win)
		return
	}
	if spec.Kind == window.Tumbling {
		// The common case, without the closure of Assign.
		start, end, _ := w.tc.Window(r.Ts, spec.Size) // exact: r.ts is in range
		if spec.Late(end, w.wm) {
			w.toLate(r)
			return
		}
		w.addTo(r, start, end)
		return
	}
	// Sliding and global: a record is late only if all its windows are.
	late := true
	spec.Assign(r.Ts, func(start, end int64) {
		if !spec.Late(end, w.wm) {
			late = false
			w.addTo(r, start, end)
		}
	})
	if late {
		w.toLate(r)
	}
}

// Merge folds pre-aggregated partials into the windows. A partial is never
// late: its sender combined only records whose windows were not past
// cleanup at its own watermark, which is at least this operator's.
func (w *windowTask[K, T, A, R]) Merge(pb *exchange.Pbatch[K, A]) {
	for i := range pb.Recs {
		w.MergeOne(&pb.Recs[i])
	}
	pb.Release()
}

// MergeOne folds one partial into its window.
func (w *windowTask[K, T, A, R]) MergeOne(p *exchange.Partial[K, A]) {
	if w.spec.Late(p.End, w.wm) {
		panic("weir: a pre-aggregated partial arrived after its window's cleanup")
	}
	set := w.table.Upsert(p.H, p.K)
	win := set.Find(p.Start, p.End)
	if win == nil {
		// A new window takes the partial as it is: Merge is only ever
		// given two accumulators that have seen records.
		set.W = append(set.W, window.Win[A]{Start: p.Start, End: p.End, Acc: p.Acc})
		win = &set.W[len(set.W)-1]
	} else {
		win.Acc = w.agg.Merge(win.Acc, p.Acc)
		win.Touch()
	}
	w.due(win)
}

// addTo adds r to the window [start, end).
func (w *windowTask[K, T, A, R]) addTo(r *dataflow.Krec[K, T], start, end int64) {
	set := w.table.Upsert(r.H, r.K)
	win := set.Get(start, end, w.agg.Init)
	win.Acc = w.agg.Add(win.Acc, r.V)
	win.Touch()
	w.due(win)
}

func (w *windowTask[K, T, A, R]) toLate(r *dataflow.Krec[K, T]) {
	w.lateCount.Add(1)
	w.lateB.V = append(w.lateB.V, r.V)
	w.lateB.Ts = append(w.lateB.Ts, r.Ts)
}

func (w *windowTask[K, T, A, R]) Mark(m progress.Marker) error {
	if w.micro != nil {
		// The epoch's records arrive now, before its watermark applies.
		if err := w.micro.Run(m); err != nil {
			return err
		}
		if err := w.flushLate(); err != nil {
			return err
		}
	}
	err := w.advance(m, func(k K, win *window.Win[A]) error {
		if err := w.checkHeld(k, win, "result", "has"); err != nil {
			return err
		}
		return w.emit(WindowResult[K, R]{Key: k, Start: win.Start, End: win.End, Value: w.agg.Result(win.Acc)}, win.End-1)
	})
	if err != nil {
		return err
	}
	if f, ok := w.table.(flusher); ok {
		if err := f.Flush(); err != nil {
			return err
		}
	}
	m.Watermark = w.wm // its own, restored with it: never behind
	if err := w.out.Mark(m); err != nil {
		return err
	}
	return w.late.Mark(m)
}

// newKeyedTable makes the state table of a keyed operator. String keys are
// cloned when first stored: records often hold substrings of large input
// buffers, which long-lived state must not pin.
type keyedTable[K comparable, V any] = state.Table[K, V]

func newKeyedTable[K comparable, V any]() *state.Table[K, V] { return state.NewLongTable[K, V]() }

// checkAggregate fails an aggregation that cannot run, and gives agg a
// Result if it has none and its accumulator is the result.
func checkAggregate[K comparable, T, A, R any](name string, ws WindowedStream[K, T], agg *Aggregator[T, A, R]) error {
	if err := ws.spec.Validate(); err != nil {
		return fmt.Errorf("weir: %s: %w", name, err)
	}
	if ws.spec.NeedsTime() && !ws.k.s.timed {
		return fmt.Errorf("weir: %s: %s windows need event time; assign it with EventTime", name, ws.spec)
	}
	if agg.Add == nil {
		return fmt.Errorf("weir: %s: aggregator has no Add", name)
	}
	if ws.spec.Kind == window.Session && agg.Merge == nil {
		return fmt.Errorf("weir: %s: session windows need an aggregator with Merge", name)
	}
	if agg.Result == nil {
		if _, ok := any((*A)(nil)).(*R); !ok {
			return fmt.Errorf("weir: %s: aggregator has no Result and %T is not %T", name, *new(A), *new(R))
		}
		agg.Result = func(a A) R { return any(a).(R) }
	}
	if ws.late.node != nil {
		return errors.New("weir: a windowed stream can be aggregated only once")
	}
	return nil
}
