package op

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/window"
)

// The record joins (IntervalJoin, InnerJoin) share one operator: per key
// it keeps the records of each side that may still match, each with its
// event time and the clock reading at which it expires; a record that
// arrives is paired at once with the kept records of the other side that
// match it, and kept itself unless already expired. Expired records are
// dropped at epoch ends, by one scan of the keys once the clock passes
// the earliest expiry.

// kept is a record a join keeps: its event time, the clock reading (the
// watermark, or the wall clock in ms) at which it expires, and itself.
type kept[T any] struct {
	Ts, Exp int64
	V       T
}

// sides is the state of one key: the kept records of each input.
type sides[L, R any] struct {
	Left  []kept[L]
	Right []kept[R]
}

// pairRule is what tells the record joins apart.
type pairRule struct {
	// interval: a pair matches when r.ts-l.ts is in [lower, upper];
	// records at or behind the watermark are late, and a record expires
	// once no record on time can match it.
	interval     bool
	lower, upper int64
	// ttl (ms, 0: none) expires an inner join's records, in processing
	// time if proc, else in event time.
	ttl  int64
	proc bool
}

// rightOf is the range of event times of the right records that a left
// record at ts matches; leftOf the converse.
func (p pairRule) rightOf(ts int64) (lo, hi int64) {
	if !p.interval {
		return math.MinInt64, math.MaxInt64
	}
	return window.AddSat(ts, p.lower), window.AddSat(ts, p.upper)
}

func (p pairRule) leftOf(ts int64) (lo, hi int64) {
	if !p.interval {
		return math.MinInt64, math.MaxInt64
	}
	return window.SubSat(ts, p.upper), window.SubSat(ts, p.lower)
}

// expiry is when a record at ts that arrived at wall time stamp expires:
// a left record of an interval join once the watermark reaches ts+upper
// (a right record on time, later than the watermark, cannot match it
// then), a right one at ts-lower; an inner join's record d after its
// event time or its arrival; never without a TTL.
func (p pairRule) expiry(left bool, ts, stamp int64) int64 {
	switch {
	case p.interval && left:
		return window.AddSat(ts, p.upper)
	case p.interval:
		return window.SubSat(ts, p.lower)
	case p.ttl == 0:
		return math.MaxInt64
	case p.proc:
		return window.AddSat(stamp, p.ttl)
	}
	return window.AddSat(ts, p.ttl)
}

// pairJoin adds a record join of l and r. rule makes the join's rule
// from its options and whether both inputs have event time, or refuses
// them.
func pairJoin[K comparable, L, R, O any](l KeyedStream[K, L], r KeyedStream[K, R], op string, f func(K, L, R) O, opts []dataflow.Option,
	rule func(c dataflow.OpConfig, timed bool) (pairRule, error)) Stream[O] {
	j := l.s.job
	c := dataflow.OpOptions(opts)
	n := j.Add(&dataflow.Node{Name: c.Name, Op: op, Kind: plan.Inboxed, State: plan.Keyed, Sel: plan.AnyNumber, Key: l.name,
		Par: c.Parallelism, ParSet: c.ParSet, Ports: singlePort[O]()})
	refuseOptions(j, n.Name, c, takesTTL)
	n.Inputs = []dataflow.InputEdge{keyedInput(l), keyedInput(r)}
	timed := l.s.timed && r.s.timed
	out := Stream[O]{job: j, node: n, timed: timed}
	pr, err := rule(c, timed)
	switch {
	case r.s.job != j:
		err = errors.New("streams from different jobs")
	case f == nil:
		err = errors.New("the join function is nil")
	}
	if err != nil {
		j.Fail(fmt.Errorf("weir: %s: %w", n.Name, err))
		return out
	}
	n.Params = fmt.Sprintf("%+v, key, left, right, result: %s", pr,
		dataflow.TypeList(reflect.TypeFor[K](), reflect.TypeFor[L](), reflect.TypeFor[R](), reflect.TypeFor[O]()))
	late := &atomic.Int64{}
	if pr.interval {
		j.LateCounters = append(j.LateCounters, dataflow.LateCounter{Name: n.Name, N: late})
	}
	n.NewTask = func(tc dataflow.TaskCtx, outs []any) (runtime.InputTask, error) {
		table, err := newStore[K, sides[L, R]](j, n.Name, tc.Inst)
		if err != nil {
			return nil, err
		}
		t := &pairTask[K, L, R, O]{outBuf: outBuf[O]{size: j.Cfg.BatchSize, out: outs[0].(dataflow.Pusher[O])},
			rule: pr, f: f, table: table, wm: progress.NoWatermark, next: math.MaxInt64, late: late}
		tc.Saves(n.Name, t)
		return t, nil
	}
	return out
}

// pairTask is an instance of a record join.
type pairTask[K comparable, L, R, O any] struct {
	outBuf[O]
	rule  pairRule
	f     func(K, L, R) O
	table keyedStore[K, sides[L, R]]
	wm    int64
	next  int64 // the clock reading at which some kept record expires
	now   int64 // the clock reading for the batch at hand
	stamp int64 // the wall time (ms) the batch at hand arrived at
	late  *atomic.Int64
}

// clock is what records expire by: the watermark, the wall clock (ms)
// under a processing-time TTL, or nothing (-inf) without a TTL.
func (t *pairTask[K, L, R, O]) clock() int64 {
	switch {
	case t.rule.interval || (t.rule.ttl > 0 && !t.rule.proc):
		return t.wm
	case t.rule.ttl > 0:
		return time.Now().UnixMilli()
	}
	return math.MinInt64
}

func (t *pairTask[K, L, R, O]) Batch(port int, b any) error {
	if t.rule.proc {
		t.stamp = time.Now().UnixMilli()
		t.now = t.stamp
	} else {
		t.now = t.clock()
	}
	if port == 0 {
		kb := b.(*dataflow.Kbatch[K, L])
		defer kb.Release()
		for i := range kb.Recs {
			if err := t.addLeft(&kb.Recs[i]); err != nil {
				return err
			}
		}
		return nil
	}
	kb := b.(*dataflow.Kbatch[K, R])
	defer kb.Release()
	for i := range kb.Recs {
		if err := t.addRight(&kb.Recs[i]); err != nil {
			return err
		}
	}
	return nil
}

// addLeft pairs a left record with the right records of its key that it
// matches, and keeps it; addRight is its mirror.
func (t *pairTask[K, L, R, O]) addLeft(x *dataflow.Krec[K, L]) error {
	if t.isLate(x.Ts) {
		return nil
	}
	p := t.table.Upsert(x.H, x.K)
	lo, hi := t.rule.rightOf(x.Ts)
	if err := pairWith(t, x.Ts, p.Right, lo, hi, func(y R) O { return t.f(x.K, x.V, y) }); err != nil {
		return err
	}
	p.Left = keep(t, p.Left, kept[L]{Ts: x.Ts, Exp: t.rule.expiry(true, x.Ts, t.stamp), V: x.V})
	t.dropEmpty(p, x.H, x.K)
	return nil
}

func (t *pairTask[K, L, R, O]) addRight(x *dataflow.Krec[K, R]) error {
	if t.isLate(x.Ts) {
		return nil
	}
	p := t.table.Upsert(x.H, x.K)
	lo, hi := t.rule.leftOf(x.Ts)
	if err := pairWith(t, x.Ts, p.Left, lo, hi, func(y L) O { return t.f(x.K, y, x.V) }); err != nil {
		return err
	}
	p.Right = keep(t, p.Right, kept[R]{Ts: x.Ts, Exp: t.rule.expiry(false, x.Ts, t.stamp), V: x.V})
	t.dropEmpty(p, x.H, x.K)
	return nil
}

// isLate counts and reports a record of an interval join at or behind
// the watermark.
func (t *pairTask[K, L, R, O]) isLate(ts int64) bool {
	if t.rule.interval && ts <= t.wm {
		t.late.Add(1)
		return true
	}
	return false
}

// pairWith emits the pairs of a record at ts with the kept records of the
// other side whose times are in [lo, hi], made by pair.
func pairWith[K comparable, L, R, O, T any](t *pairTask[K, L, R, O], ts int64, other []kept[T], lo, hi int64, pair func(T) O) error {
	for i := range other {
		if y := &other[i]; lo <= y.Ts && y.Ts <= hi {
			if err := t.emit(pair(y.V), max(ts, y.Ts)); err != nil {
				return err
			}
		}
	}
	return nil
}

// keep appends k to s unless it has expired already.
func keep[K comparable, L, R, O, T any](t *pairTask[K, L, R, O], s []kept[T], k kept[T]) []kept[T] {
	if k.Exp <= t.now {
		return s
	}
	t.next = min(t.next, k.Exp)
	return append(s, k)
}

// dropEmpty deletes a key that keeps nothing (its record expired at once).
func (t *pairTask[K, L, R, O]) dropEmpty(p *sides[L, R], h uint64, k K) {
	if len(p.Left) == 0 && len(p.Right) == 0 {
		t.table.Delete(h, k)
	}
}

func (t *pairTask[K, L, R, O]) Mark(m progress.Marker) error {
	t.wm = max(t.wm, m.Watermark)
	if now := t.clock(); now >= t.next {
		next := int64(math.MaxInt64)
		t.table.DeleteFunc(func(_ K, p *sides[L, R]) bool {
			p.Left = expire(p.Left, now, &next)
			p.Right = expire(p.Right, now, &next)
			return len(p.Left) == 0 && len(p.Right) == 0
		})
		t.next = next
	}
	if f, ok := t.table.(flusher); ok {
		if err := f.Flush(); err != nil {
			return err
		}
	}
	if err := t.Flush(); err != nil {
		return err
	}
	return t.out.Mark(m)
}

// expire drops the records of s that expired at clock now, and lowers
// next to the earliest expiry of the others.
func expire[T any](s []kept[T], now int64, next *int64) []kept[T] {
	s = slices.DeleteFunc(s, func(k kept[T]) bool { return k.Exp <= now })
	for i := range s {
		*next = min(*next, s[i].Exp)
	}
	return s
}

func (t *pairTask[K, L, R, O]) Watermark() int64          { return t.wm }
func (t *pairTask[K, L, R, O]) RestoreWatermark(wm int64) { t.wm = max(t.wm, wm) }

func (t *pairTask[K, L, R, O]) SnapshotKeyed(op string, groups int, out []checkpoint.StateBlob) ([]checkpoint.StateBlob, error) {
	return snapshotTable(t.table, t.wm, op, groups, out)
}

func (t *pairTask[K, L, R, O]) RestoreKeyed(blobs [][]byte) error {
	wm, err := restoreTable(t.table, blobs, func(p *sides[L, R]) {
		for i := range p.Left {
			t.next = min(t.next, p.Left[i].Exp)
		}
		for i := range p.Right {
			t.next = min(t.next, p.Right[i].Exp)
		}
	})
	if len(blobs) > 0 {
		t.wm = max(t.wm, wm)
	}
	if f, ok := t.table.(flusher); ok && err == nil {
		err = f.Flush()
	}
	return err
}
