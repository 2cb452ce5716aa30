package weir

import (
	"fmt"
	"math"
	"reflect"
	"sync/atomic"

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
	oc := opOptions(c.opts)
	spec := w.spec
	spec.Lateness = c.lateness
	n := j.add(&node{name: oc.name, op: "join(" + spec.String() + ")", kind: plan.Inboxed, state: plan.Keyed, sel: plan.AnyNumber, key: l.name, par: oc.parallelism, parSet: oc.parSet, ports: singlePort[O]()})
	n.inputs = []inputEdge{keyedInput(l), keyedInput(r)}
	n.params = fmt.Sprintf("lateness %dms, key, left, right, result: %s", spec.Lateness, typeList(reflect.TypeFor[K](), reflect.TypeFor[L](), reflect.TypeFor[R](), reflect.TypeFor[O]()))
	out := Stream[O]{job: j, node: n, timed: l.s.timed && r.s.timed}
	switch {
	case r.s.job != j:
		j.fail(fmt.Errorf("weir: %s: streams from different jobs", n.name))
	case spec.Validate() != nil:
		j.fail(fmt.Errorf("weir: %s: %w", n.name, spec.Validate()))
	case spec.Kind == window.Session:
		j.fail(fmt.Errorf("weir: %s: session windows are not supported in joins", n.name))
	case spec.NeedsTime() && !out.timed:
		j.fail(fmt.Errorf("weir: %s: %s windows need event time on both inputs; assign it with EventTime", n.name, spec))
	}
	held := newTimeRange() // of the results
	n.times = []*timeRange{held}
	holdTimes(l.s.node, l.s.port, spec)
	holdTimes(r.s.node, r.s.port, spec)
	late := &atomic.Int64{}
	j.lateCounters = append(j.lateCounters, lateCounter{name: n.name, n: late})
	n.newTask = func(tc taskCtx, outs []any) (runtime.InputTask, error) {
		t := &joinTask[K, L, R, O]{
			name: n.name, held: *held,
			spec: spec, f: f, size: j.cfg.batchSize, out: outs[0].(pusher[O]),
			table: newKeyedTable[K, window.Set[joinAcc[L, R]]](),
			next:  math.MaxInt64, wm: progress.NoWatermark, late: late,
		}
		tc.saves(n.name, t)
		return t, nil
	}
	return out
}

type joinAcc[L, R any] struct {
	left  []L
	right []R
}

type joinTask[K comparable, L, R, O any] struct {
	name  string
	held  timeRange // the times results may have
	spec  window.Spec
	f     func(K, L, R) O
	size  int
	out   pusher[O]
	table *keyedTable[K, window.Set[joinAcc[L, R]]]
	next  int64
	wm    int64
	late  *atomic.Int64
	outB  batch[O]
}

func (t *joinTask[K, L, R, O]) Batch(port int, b any) error {
	if port == 0 {
		kb := b.(*kbatch[K, L])
		for i := range kb.recs {
			r := &kb.recs[i]
			t.add(r.h, r.k, r.ts, func(a *joinAcc[L, R]) { a.left = append(a.left, r.v) })
		}
		kb.release()
		return nil
	}
	kb := b.(*kbatch[K, R])
	for i := range kb.recs {
		r := &kb.recs[i]
		t.add(r.h, r.k, r.ts, func(a *joinAcc[L, R]) { a.right = append(a.right, r.v) })
	}
	kb.release()
	return nil
}

func (t *joinTask[K, L, R, O]) add(h uint64, k K, ts int64, put func(*joinAcc[L, R])) {
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
		t.next = min(t.next, window.Due(w, t.spec.Lateness))
	})
	if late {
		t.late.Add(1)
	}
}

func (t *joinTask[K, L, R, O]) Mark(m progress.Marker) error {
	t.wm = max(t.wm, m.Watermark)
	if t.wm >= t.next {
		next := int64(math.MaxInt64)
		var err error
		t.table.DeleteFunc(func(k K, set *window.Set[joinAcc[L, R]]) bool {
			next = min(next, set.Fire(t.wm, t.spec.Lateness, func(w *window.Win[joinAcc[L, R]]) {
				if !t.held.holds(w.End-1) && err == nil && len(w.Acc.left) > 0 && len(w.Acc.right) > 0 {
					err = fmt.Errorf("weir: %s: the results of window [%d, %d) of key %s have event time %d, outside the range the windows downstream can hold [%d, %d]",
						t.name, w.Start, w.End, showRecord(k), w.End-1, t.held.lo, t.held.hi)
					return
				}
				for _, l := range w.Acc.left {
					for _, r := range w.Acc.right {
						t.outB.v = append(t.outB.v, t.f(k, l, r))
						t.outB.ts = append(t.outB.ts, w.End-1)
						if len(t.outB.v) >= t.size && err == nil {
							err = t.flush()
						}
					}
				}
			}))
			return len(set.W) == 0
		})
		t.next = next
		if err != nil {
			return err
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	return t.out.mark(m)
}

func (t *joinTask[K, L, R, O]) flush() error {
	if len(t.outB.v) == 0 {
		return nil
	}
	err := t.out.push(&t.outB)
	clear(t.outB.v)
	t.outB.v, t.outB.ts = t.outB.v[:0], t.outB.ts[:0]
	return err
}
