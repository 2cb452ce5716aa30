package op

import (
	"fmt"
	"reflect"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
)

// ProcessFunc is a keyed process function: OnRecord is called for every
// record, OnTimer for every timer that fires (it is required once the
// function registers a timer), each with the context of the key. Sides
// declares the side outputs the function emits to.
type ProcessFunc[K comparable, T, S, U any] struct {
	OnRecord func(c *ProcessContext[K, S, U], v T)
	OnTimer  func(c *ProcessContext[K, S, U], t Timer)
	Sides    []SideTag
}

// CoProcessFunc is a keyed process function over two inputs keyed alike:
// OnLeft and OnRight are called for the records of each, OnTimer for the
// timers, all with the same per-key state and timers.
type CoProcessFunc[K comparable, L, R, S, U any] struct {
	OnLeft  func(c *ProcessContext[K, S, U], v L)
	OnRight func(c *ProcessContext[K, S, U], v R)
	OnTimer func(c *ProcessContext[K, S, U], t Timer)
	Sides   []SideTag
}

// KeyedProcess calls f for every record of a keyed stream with the
// record's key's context: its state (an S, the zero value at first), its
// timers, the record's event time and the outputs. Timers fire at epoch
// ends: event-time timers once the watermark reaches them, in time order,
// before the epoch's marker goes on; processing-time timers once the
// job's clock has passed them. At the end of the input every event-time
// timer fires; processing-time timers not yet due are dropped. State and
// timers are saved in checkpoints by key group. StateTTL bounds the life
// of the state.
func KeyedProcess[K comparable, T, S, U any](k KeyedStream[K, T], f ProcessFunc[K, T, S, U], opts ...dataflow.Option) Stream[U] {
	j := k.s.job
	sp := &procSpec[K, S, U]{onTimer: f.OnTimer, timed: k.s.timed}
	out := sp.node(j, "keyed-process", k.name, opts, f.Sides, reflect.TypeFor[K](), reflect.TypeFor[T](), reflect.TypeFor[S](), reflect.TypeFor[U]())
	n := out.node
	n.Inputs = []dataflow.InputEdge{keyedInput(k)}
	if f.OnRecord == nil {
		j.Fail(fmt.Errorf("weir: %s: its ProcessFunc has no OnRecord", n.Name))
	}
	n.NewTask = func(tc dataflow.TaskCtx, outs []any) (runtime.InputTask, error) {
		p, err := sp.instance(j, n, tc, outs)
		if err != nil {
			return nil, err
		}
		return &keyedProcTask[K, T, S, U]{procCore: p, f: f.OnRecord}, nil
	}
	return out
}

// CoProcess is KeyedProcess over two streams keyed alike (the same key
// type, and event time on both or neither): f's OnLeft and OnRight see
// the records of l and r, with one state and one set of timers per key.
// The watermark is the lower of the inputs'.
func CoProcess[K comparable, L, R, S, U any](l KeyedStream[K, L], r KeyedStream[K, R], f CoProcessFunc[K, L, R, S, U], opts ...dataflow.Option) Stream[U] {
	j := l.s.job
	sp := &procSpec[K, S, U]{onTimer: f.OnTimer, timed: l.s.timed && r.s.timed}
	out := sp.node(j, "co-process", l.name, opts, f.Sides, reflect.TypeFor[K](), reflect.TypeFor[L](), reflect.TypeFor[R](), reflect.TypeFor[S](), reflect.TypeFor[U]())
	n := out.node
	n.Inputs = []dataflow.InputEdge{keyedInput(l), keyedInput(r)}
	switch {
	case r.s.job != j:
		j.Fail(fmt.Errorf("weir: %s: streams from different jobs", n.Name))
	case l.s.timed != r.s.timed:
		j.Fail(fmt.Errorf("weir: %s: one input has event time and the other has not; assign it to both with EventTime", n.Name))
	case f.OnLeft == nil || f.OnRight == nil:
		j.Fail(fmt.Errorf("weir: %s: its CoProcessFunc needs OnLeft and OnRight", n.Name))
	}
	n.NewTask = func(tc dataflow.TaskCtx, outs []any) (runtime.InputTask, error) {
		p, err := sp.instance(j, n, tc, outs)
		if err != nil {
			return nil, err
		}
		return &coProcTask[K, L, R, S, U]{procCore: p, left: f.OnLeft, right: f.OnRight}, nil
	}
	return out
}

// procSpec is what the instances of a keyed process operator share.
type procSpec[K comparable, S, U any] struct {
	onTimer func(*ProcessContext[K, S, U], Timer)
	timed   bool
	ttl     dataflow.TTL
	sides   *sideReg
}

// node adds the operator's node, with the checks of its options.
func (sp *procSpec[K, S, U]) node(j *dataflow.Graph, op, key string, opts []dataflow.Option, sides []SideTag, types ...reflect.Type) Stream[U] {
	c := dataflow.OpOptions(opts)
	n := j.Add(&dataflow.Node{Name: c.Name, Op: op, Kind: plan.Inboxed, State: plan.Keyed, Sel: plan.AnyNumber, Key: key, Par: c.Parallelism, ParSet: c.ParSet, Ports: singlePort[U]()})
	n.Params = "key, inputs, state, result: " + dataflow.TypeList(types...)
	for _, d := range sides {
		n.Params += fmt.Sprintf(", side output %q of %v", d.sideName(), d.sideType())
	}
	refuseOptions(j, n.Name, c, takesTTL)
	sp.ttl = c.TTL
	n.Params += checkTTL(j, n.Name, c.TTL, sp.timed)
	if c.SelSet {
		j.Fail(fmt.Errorf("weir: %s: Selectivity does not apply to %s, whose timers emit too", n.Name, op))
	}
	sp.sides = newSideReg(j, n, sides, sp.timed)
	return Stream[U]{job: j, node: n, timed: sp.timed, sides: sp.sides}
}

// instance makes one instance's core and registers its state.
func (sp *procSpec[K, S, U]) instance(j *dataflow.Graph, n *dataflow.Node, tc dataflow.TaskCtx, outs []any) (*procCore[K, S, U], error) {
	table, err := newStore[K, procEntry[S]](j, n.Name, tc.Inst)
	if err != nil {
		return nil, err
	}
	p := &procCore[K, S, U]{name: n.Name, table: table.(procStore[K, procEntry[S]]), onTimer: sp.onTimer,
		wm: progress.NoWatermark, clock: j.ProcessingClock(), ttl: newStateTTL(sp.ttl), timed: sp.timed,
		out: outs[0].(dataflow.Pusher[U]), size: j.Cfg.BatchSize}
	p.sides = sp.sides.slots(outs, p.size, &p.err)
	tc.Saves(n.Name, p)
	return p, nil
}

type keyedProcTask[K comparable, T, S, U any] struct {
	*procCore[K, S, U]
	f func(*ProcessContext[K, S, U], T)
}

func (t *keyedProcTask[K, T, S, U]) Batch(_ int, b any) error {
	return records(t.procCore, b.(*dataflow.Kbatch[K, T]), t.f)
}

type coProcTask[K comparable, L, R, S, U any] struct {
	*procCore[K, S, U]
	left  func(*ProcessContext[K, S, U], L)
	right func(*ProcessContext[K, S, U], R)
}

func (t *coProcTask[K, L, R, S, U]) Batch(port int, b any) error {
	if port == 0 {
		return records(t.procCore, b.(*dataflow.Kbatch[K, L]), t.left)
	}
	return records(t.procCore, b.(*dataflow.Kbatch[K, R]), t.right)
}
