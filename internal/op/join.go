package op

import (
	"fmt"
	"reflect"
	"sync/atomic"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/window"
)

// Join joins two keyed streams over windows: when a window fires, f is
// called for every pair of a left and a right record with the same key in
// that window (an inner join), and its results form the output. Tumbling,
// sliding and global windows are supported. Records later than the allowed
// lateness are counted in Metrics().Late. With AllowedLateness, a record
// that arrives after its window fired makes the window fire again with all
// its pairs, including those already emitted (as Flink's window join
// does): downstream operators see those pairs twice.
func Join[K comparable, L, R, O any](l KeyedStream[K, L], r KeyedStream[K, R], w WindowSpec, f func(key K, l L, r R) O, opts ...WindowOption) Stream[O] {
	j := l.s.job
	var c windowConfig
	for _, o := range opts {
		o(&c)
	}
	oc := dataflow.OpOptions(c.opts)
	spec := w.spec
	spec.Lateness = c.lateness
	n := j.Add(&dataflow.Node{Name: oc.Name, Op: "join(" + spec.String() + ")", Kind: plan.Inboxed, State: plan.Keyed, Sel: plan.AnyNumber, Key: l.name, Par: oc.Parallelism, ParSet: oc.ParSet, Ports: singlePort[O]()})
	n.Inputs = []dataflow.InputEdge{keyedInput(l), keyedInput(r)}
	refuseOptions(j, n.Name, oc, 0)
	n.Params = fmt.Sprintf("lateness %dms, key, left, right, result: %s", spec.Lateness, dataflow.TypeList(reflect.TypeFor[K](), reflect.TypeFor[L](), reflect.TypeFor[R](), reflect.TypeFor[O]()))
	out := Stream[O]{job: j, node: n, timed: l.s.timed && r.s.timed}
	switch {
	case r.s.job != j:
		j.Fail(fmt.Errorf("weir: %s: streams from different jobs", n.Name))
	case spec.Validate() != nil:
		j.Fail(fmt.Errorf("weir: %s: %w", n.Name, spec.Validate()))
	case spec.Kind == window.Session:
		j.Fail(fmt.Errorf("weir: %s: session windows are not supported in joins", n.Name))
	case spec.NeedsTime() && !out.timed:
		j.Fail(fmt.Errorf("weir: %s: %s windows need event time on both inputs; assign it with EventTime", n.Name, spec))
	}
	held := dataflow.NewTimeRange() // of the results
	n.Times = []*dataflow.TimeRange{held}
	dataflow.HoldTimes(l.s.node, l.s.port, spec)
	dataflow.HoldTimes(r.s.node, r.s.port, spec)
	late := &atomic.Int64{}
	j.LateCounters = append(j.LateCounters, dataflow.LateCounter{Name: n.Name, N: late})
	n.NewTask = func(tc dataflow.TaskCtx, outs []any) (runtime.InputTask, error) {
		t := &joinTask[K, L, R, O]{f: f, late: late,
			windowed: newWindowed[K, joinAcc[L, R]](n.Name, spec, *held, j.Cfg.BatchSize, outs[0].(dataflow.Pusher[O]),
				keyedStore[K, window.Set[joinAcc[L, R]]](newKeyedTable[K, window.Set[joinAcc[L, R]]]())),
		}
		tc.Saves(n.Name, t)
		return t, nil
	}
	return out
}

type joinAcc[L, R any] struct {
	left  []L
	right []R
}

type joinTask[K comparable, L, R, O any] struct {
	windowed[K, joinAcc[L, R], O]
	f    func(K, L, R) O
	late *atomic.Int64
}

func (t *joinTask[K, L, R, O]) Batch(port int, b any) error {
	if port == 0 {
		kb := b.(*dataflow.Kbatch[K, L])
		for i := range kb.Recs {
			r := &kb.Recs[i]
			t.Add(r.H, r.K, r.Ts, func(a *joinAcc[L, R]) { a.left = append(a.left, r.V) })
		}
		kb.Release()
		return nil
	}
	kb := b.(*dataflow.Kbatch[K, R])
	for i := range kb.Recs {
		r := &kb.Recs[i]
		t.Add(r.H, r.K, r.Ts, func(a *joinAcc[L, R]) { a.right = append(a.right, r.V) })
	}
	kb.Release()
	return nil
}

func (t *joinTask[K, L, R, O]) Add(h uint64, k K, ts int64, put func(*joinAcc[L, R])) {
	late := true
	t.spec.Assign(ts, func(start, end int64) {
		if t.spec.Late(end, t.wm) {
			return
		}
		late = false
		set := t.table.Upsert(h, k)
		w := set.Get(start, end, nil)
		put(&w.Acc)
		w.Touch()
		t.due(w)
	})
	if late {
		t.late.Add(1)
	}
}

func (t *joinTask[K, L, R, O]) Mark(m progress.Marker) error {
	err := t.advance(m, func(k K, w *window.Win[joinAcc[L, R]]) error {
		if len(w.Acc.left) == 0 || len(w.Acc.right) == 0 {
			return nil
		}
		if err := t.checkHeld(k, w, "results", "have"); err != nil {
			return err
		}
		for _, l := range w.Acc.left {
			for _, r := range w.Acc.right {
				if err := t.emit(t.f(k, l, r), w.End-1); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	m.Watermark = t.wm // its own, restored with it: never behind
	return t.out.Mark(m)
}
