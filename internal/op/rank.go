package op

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/window"
)

// TopN keeps, of the results of each window (those with the same Start
// and End), the n with the greatest values by less, and emits them
// greatest first once the window is complete. Results of equal value are
// ranked by key, lowest first (see ArgMax for the order of keys), so the
// n kept do not depend on the order results arrive in. n must be at
// least 1.
//
// A window's results are complete when the watermark reaches End−1, the
// time they carry: the window operator upstream emits them before the
// marker whose watermark does. TopN runs in parallel over windows (keyed
// by Start and End), so the results of different windows come from
// different instances; its outputs keep their time End−1.
//
// Updating input (an upstream window with AllowedLateness that fires
// again): by default a window's results are forgotten once it fired, and
// a result that arrives after that is counted in Metrics().Late and
// dropped. With StateTTL(d, EventTimeDomain), d at least the upstream
// lateness, a window's results are kept until the watermark reaches
// End−1+d: a later result replaces the earlier one of its key, and at the
// end of its epoch the window's top n is emitted again, whole (downstream
// sees the window's top n more than once, the last one current).
// StateTTL in processing time is refused.
func TopN[K comparable, R any](s Stream[WindowResult[K, R]], n int, less func(a, b R) bool, opts ...dataflow.Option) Stream[WindowResult[K, R]] {
	check := func() error {
		if n < 1 {
			return fmt.Errorf("TopN(%d): n must be at least 1", n)
		}
		return nil
	}
	return rank(s, fmt.Sprintf("topN(%d)", n), less, opts, check, func(t *rankTask[K, R], res []ranked[K, R]) []ranked[K, R] {
		slices.SortFunc(res, t.compare)
		return res[:min(n, len(res))]
	})
}

// ArgMax keeps, of the results of each window (those with the same Start
// and End), every result whose value is the greatest by less: all of
// them when several tie. It emits them in the order of their keys once
// the window is complete, as TopN does (see TopN for when, and for
// updating input). Keys are ordered alike in every run: strings,
// integers, floats and bools by value, structs field by field and arrays
// element by element, other keys by their %v text.
func ArgMax[K comparable, R any](s Stream[WindowResult[K, R]], less func(a, b R) bool, opts ...dataflow.Option) Stream[WindowResult[K, R]] {
	return rank(s, "argMax", less, opts, nil, func(t *rankTask[K, R], res []ranked[K, R]) []ranked[K, R] {
		best := 0
		for i := range res {
			if less(res[best].Value, res[i].Value) {
				best = i
			}
		}
		t.ties = t.ties[:0]
		for _, x := range res {
			if !less(x.Value, res[best].Value) {
				t.ties = append(t.ties, x)
			}
		}
		slices.SortFunc(t.ties, func(a, b ranked[K, R]) int { return t.order(a.Key, b.Key) })
		return t.ties
	})
}

// span is a window's bounds: what TopN and ArgMax key their input by.
type span struct{ Start, End int64 }

// ranked is one result of a window as TopN and ArgMax keep it.
type ranked[K comparable, R any] struct {
	Key   K
	Value R
}

// rankAcc is a window's results so far.
type rankAcc[K comparable, R any] struct{ Res []ranked[K, R] }

// rank adds a ranking operator: keyed by window, its state a window set
// per window (one window each) whose accumulator holds the results, fired
// by the windowed skeleton when the watermark reaches End−1; pick chooses
// the results to emit.
func rank[K comparable, R any](s Stream[WindowResult[K, R]], op string, less func(a, b R) bool, opts []dataflow.Option,
	check func() error, pick func(t *rankTask[K, R], res []ranked[K, R]) []ranked[K, R]) Stream[WindowResult[K, R]] {
	j := s.job
	c := dataflow.OpOptions(opts)
	n := j.Add(&dataflow.Node{Name: c.Name, Op: op, Kind: plan.Inboxed, State: plan.Keyed, Sel: plan.AnyNumber,
		Par: c.Parallelism, ParSet: c.ParSet, Ports: singlePort[WindowResult[K, R]]()})
	refuseOptions(j, n.Name, c, takesTTL)
	n.Params = fmt.Sprintf("keep %v, key, result: %s", c.TTL.After, dataflow.TypeList(reflect.TypeFor[K](), reflect.TypeFor[R]()))
	byWindow := KeyedStream[span, WindowResult[K, R]]{s: s, key: func(r WindowResult[K, R]) span { return span{r.Start, r.End} }}
	n.Inputs = []dataflow.InputEdge{keyedInput(byWindow)}
	out := Stream[WindowResult[K, R]]{job: j, node: n, timed: s.timed}
	if err := checkRank(c, less, check); err != nil {
		j.Fail(fmt.Errorf("weir: %s: %w", n.Name, err))
		return out
	}
	held := dataflow.NewTimeRange() // of the results
	n.Times = []*dataflow.TimeRange{held}
	late := &atomic.Int64{}
	j.LateCounters = append(j.LateCounters, dataflow.LateCounter{Name: n.Name, N: late})
	spec := window.Spec{Kind: window.Global, Lateness: ms(c.TTL.After)}
	n.NewTask = func(tc dataflow.TaskCtx, outs []any) (runtime.InputTask, error) {
		table, err := newStore[span, window.Set[rankAcc[K, R]]](j, n.Name, tc.Inst)
		if err != nil {
			return nil, err
		}
		t := &rankTask[K, R]{less: less, order: keyOrder[K](), pick: pick, late: late,
			windowed: newWindowed[span, rankAcc[K, R]](n.Name, spec, *held, j.Cfg.BatchSize, outs[0].(dataflow.Pusher[WindowResult[K, R]]), table)}
		tc.Saves(n.Name, t)
		return t, nil
	}
	return out
}

func checkRank[R any](c dataflow.OpConfig, less func(a, b R) bool, check func() error) error {
	if less == nil {
		return errors.New("less is nil")
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	if err := c.TTL.Check(); err != nil {
		return err
	}
	if c.TTL.Set() && c.TTL.Domain != dataflow.EventTime {
		return fmt.Errorf("StateTTL(%v, %v): a window's results are kept in event time only", c.TTL.After, c.TTL.Domain)
	}
	return nil
}

// rankTask is an instance of TopN or ArgMax.
type rankTask[K comparable, R any] struct {
	windowed[span, rankAcc[K, R], WindowResult[K, R]]
	less  func(a, b R) bool
	order func(a, b K) int
	pick  func(t *rankTask[K, R], res []ranked[K, R]) []ranked[K, R]
	ties  []ranked[K, R]
	late  *atomic.Int64
}

// compare ranks a before b if its value is greater, or equal with a lower
// key.
func (t *rankTask[K, R]) compare(a, b ranked[K, R]) int {
	switch {
	case t.less(b.Value, a.Value):
		return -1
	case t.less(a.Value, b.Value):
		return 1
	}
	return t.order(a.Key, b.Key)
}

func (t *rankTask[K, R]) Batch(_ int, b any) error {
	kb := b.(*dataflow.Kbatch[span, WindowResult[K, R]])
	for i := range kb.Recs {
		t.add(&kb.Recs[i])
	}
	kb.Release()
	return nil
}

func (t *rankTask[K, R]) add(r *dataflow.Krec[span, WindowResult[K, R]]) {
	v := &r.V
	if t.spec.Late(v.End, t.wm) {
		t.late.Add(1)
		return
	}
	w := t.table.Upsert(r.H, r.K).Get(v.Start, v.End, nil)
	if w.Fired {
		// An update of a window that fired: the key's result replaces
		// its earlier one.
		w.Acc.Res = slices.DeleteFunc(w.Acc.Res, func(x ranked[K, R]) bool { return x.Key == v.Key })
	}
	w.Acc.Res = append(w.Acc.Res, ranked[K, R]{v.Key, v.Value})
	w.Touch()
	t.due(w)
}

func (t *rankTask[K, R]) Mark(m progress.Marker) error {
	err := t.advance(m, func(s span, w *window.Win[rankAcc[K, R]]) error {
		if err := t.checkHeld(s, w, "results", "have"); err != nil {
			return err
		}
		for _, x := range t.pick(t, w.Acc.Res) {
			if err := t.emit(WindowResult[K, R]{Key: x.Key, Start: w.Start, End: w.End, Value: x.Value}, w.End-1); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if f, ok := t.table.(flusher); ok {
		if err := f.Flush(); err != nil {
			return err
		}
	}
	return t.out.Mark(m)
}
