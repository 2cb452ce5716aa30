package prompt

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/exchange"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/state"
	"github.com/weirstream/weir/internal/window"
)

// The micro-batch exchange carries a window aggregation's input under the
// prompt and pkg strategies: each epoch is one micro-batch, as in Prompt
// (Abdelhamid et al., SIGMOD 2020).
//
//  0. Hot and cold (prompt). A sender deposits only the records of keys
//     frequent enough to split (exchange.HotKeys); the others go raw to
//     the owners of their key groups, which fold them as under hash.
//  1. Buffer. Each sender (microEx) keeps the epoch's records in a
//     deposit: a frequency-aware partition.Buffer (key -> slot, counts)
//     and the records grouped by slot (partition.Grouped). At the epoch's
//     end it hands the deposit over to the exchange and forwards its
//     marker at once; it never waits for another sender. It waits only
//     when it has maxPending deposits not yet processed (backpressure).
//  2. Plan. The receivers (the window operator's instances) run the round
//     when their aligned marker ends the epoch, so every deposit of the
//     epoch is in. They meet (an in-process barrier); the last to arrive
//     merges the deposits' statistics into global key numbers and plans:
//     the map blocks (prompt: hot keys split into as few fragments as
//     balance allows; pkg: each record to the less loaded of two blocks,
//     decided by its sender on arrival) and the key -> reducer table,
//     before any map task runs. The task count comes from the elastic
//     controller (prompt).
//  3. Map. Receiver j folds block j, whichever sender buffered its records,
//     into one partial per key and window.
//  4. Reduce. Receiver r merges the partials the table gave it (a split
//     key's fragments meet here: two-level aggregation) and hands one
//     partial per key and window to the key group's owner.
//  5. Own. Each receiver merges what it owns into its window state, then
//     fires windows as usual.
//
// Everything between the receivers of a process goes through memory,
// between barriers; in a job of several processes each runs its own
// rounds and posts the others what they own (posts.go). Only the
// receivers meet: they have this exchange as their only input and
// emit nothing of an epoch before its round, so a receiver waiting at the
// barrier never holds back another.
//
// Lateness is decided as the window decides it: the round runs before the
// receivers apply the epoch's watermark, so a record whose windows are past
// cleanup at the current watermark goes to its owner raw, which routes it
// to the late output.
type MicroShared[K comparable, T, A any] struct {
	strategy partition.Strategy
	spec     window.Spec
	init     func() A
	add      func(A, T) A
	merge    func(A, A) A
	addN     func(A, int64) A // set for an aggregator that reads no record (Counting)
	key      func(T) K
	// rt routes what the reducers merged, and the records they do not
	// take, to the owners of their key groups: the table in force from the
	// epoch after the previous round (sched's, when the job's tables
	// change while it runs; see follow).
	// span is how many of the receivers, from the first, it may give key
	// groups to: the instances the operator runs on now.
	rt     *partition.Table
	sched  *routing.Schedule
	span   int
	rounds int    // rounds led so far
	after  uint64 // the epoch after the last round's
	spans  atomic.Pointer[tableSpan]
	// now is the clock (time.Now in a job).
	now      func() time.Time
	stats    *exchange.EdgeStats
	interval time.Duration // time-based epochs: the elastic controller's yardstick

	mu        sync.Mutex
	senders   int
	receivers int
	done      <-chan struct{}
	pending   [][]*deposit[K, T] // per sender, oldest first
	free      [][]*deposit[K, T]
	freed     []chan struct{}  // per sender: a deposit was released
	next      []progress.Epoch // per sender: the first epoch its unconsumed deposits may end
	finalSeen []bool

	// The round, written by its leader.
	bar       barrier
	round     []*deposit[K, T] // the deposits of the round
	planner   partition.Planner
	reweigher partition.Reweigher
	plan      *partition.Plan
	elastic   *partition.Elastic
	tasks     int
	index     *state.Table[K, int32]
	keys      []K
	hashes    []uint64
	counts    []int32
	frags     [][]fragRange // per block (prompt)
	base      []int64       // per task: records its receiver takes raw (prompt)
	start     time.Time
	finish    atomic.Int64 // unix nanos: the last receiver's end of the round
	n         int64
	busy      atomic.Int64          // nanos spent buffering since the last round (max over senders)
	tasksOut  []*MicroTask[K, T, A] // per receiver, registered when made (nil: another process's)

	// The receivers this process runs (all of them in one process), by
	// their position among them, and each receiver's position (-1: it
	// runs in another process). Map block and reducer j of a round run
	// on local[j].
	local []int
	pos   []int
	// In a job of several processes, what a round posts to and takes from
	// the others (posts.go).
	net *roundNet[K, T, A]
}

// maxPending is how many deposits a sender may hand over before the
// receivers have processed the first.
const maxPending = 2

// deposit is one sender's buffered epoch.
type deposit[K comparable, T any] struct {
	sender   int
	buf      *partition.Buffer[K]
	recs     partition.Grouped[trec[T]]
	counting bool                    // the deposit keeps counts (wins), not records (recs)
	wins     partition.Grouped[cwin] // counting: per slot, its records' windows in arrival order
	pkgBlock [][2]int32              // pkg: the blocks a slot's records chose
	pkgCount [][2]int32              // and how many chose each
	span     int                     // pkg: the blocks its sender chose among
	cold     []int64                 // prompt: per receiver, the records its sender sent raw
	through  progress.Epoch
	final    bool
	// The earliest and latest event time buffered, if timed.
	timed        bool
	minTs, maxTs int64
	// Set by the round's leader.
	gid    []int32 // per slot: global key number
	off    []int32 // per slot: records of the key in deposits before this one
	slotOf []int32 // per global key: slot here, or -1
}

// trec is a buffered record with its event time (0 without event time).
type trec[T any] struct {
	v  T
	ts int64
}

// fragRange is a fragment of a key in a block: the key's records [lo, hi),
// counted deposit by deposit in arrival order.
type fragRange struct {
	g      int32
	lo, hi int32
}

// mpart is a map task's partial for a reducer.
type mpart[A any] struct {
	g          int32
	start, end int64
	acc        A
}

// NewMicroShared returns the rounds of one keyed aggregation, shared by
// its senders and reducers; now is the clock that times the epochs'
// processing, for the elastic task count.
func NewMicroShared[K comparable, T, A any](j *dataflow.Graph, st *exchange.EdgeStats, strategy partition.Strategy, key func(T) K,
	spec window.Spec, init func() A, add func(A, T) A, merge func(A, A) A, now func() time.Time) *MicroShared[K, T, A] {
	x := &MicroShared[K, T, A]{
		strategy: strategy, spec: spec, init: init, add: add, merge: merge,
		key: key, stats: st, now: now,
		index: state.NewTable[K, int32](0),
	}
	if strategy == partition.Prompt && j.Cfg.EpochRecords == 0 {
		x.interval = j.Cfg.Interval
	}
	return x
}

// wire records the exchange's shape; every sender calls it with the same
// context but for its Sender and Outlets.
func (x *MicroShared[K, T, A]) wire(ctx dataflow.ExchangeCtx) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	err := x.place(Placement{Table: ctx.Routing, Schedule: ctx.Schedule, Done: ctx.Done,
		Name: ctx.Name, Posts: ctx.Posts, Self: ctx.Self, ProcOf: ctx.ProcOf})
	if err != nil || x.pending != nil {
		return err
	}
	senders := ctx.Senders
	x.senders = senders
	x.pending = make([][]*deposit[K, T], senders)
	x.free = make([][]*deposit[K, T], senders)
	x.freed = make([]chan struct{}, senders)
	for i := range x.freed {
		x.freed[i] = make(chan struct{}, 1)
	}
	x.next = make([]progress.Epoch, senders)
	x.finalSeen = make([]bool, senders)
	x.stats.Init(senders, x.receivers)
	return nil
}

// Placement is where an aggregation's receivers run, as its senders and
// its receivers learn it: the routing table and schedule they start with
// and, in a job of several processes, the rounds' posts, this process and
// the process of each receiver.
type Placement struct {
	Table    *partition.Table
	Schedule *routing.Schedule
	Done     <-chan struct{}
	Name     string
	Posts    dataflow.RoundPosts
	Self     int
	ProcOf   func(inst int) int
}

// place records the placement, once: the first sender or receiver made in
// this process does (a process may run receivers and no sender).
func (x *MicroShared[K, T, A]) place(p Placement) error {
	if x.pos != nil {
		return nil
	}
	rt := p.Table
	receivers := rt.Instances()
	x.receivers, x.rt, x.sched, x.done = receivers, rt, p.Schedule, p.Done
	x.pos = make([]int, receivers)
	for r := range receivers {
		x.pos[r] = -1
		if p.ProcOf == nil || p.ProcOf(r) == p.Self {
			x.pos[r] = len(x.local)
			x.local = append(x.local, r)
		}
	}
	if p.Posts != nil {
		n, err := newRoundNet[K, T, A](x, p)
		if err != nil {
			return err
		}
		x.net = n
	}
	x.span = x.localSpan(rt)
	x.bar = barrier{n: len(x.local), gen: make(chan struct{}), done: p.Done}
	if x.interval > 0 {
		x.elastic = partition.NewElastic(x.span)
	}
	return nil
}

// microEx is a sender of the micro-batch exchange.
type microEx[K comparable, T, A any] struct {
	x      *MicroShared[K, T, A]
	i      int
	hash   func(K) uint64       // its own: a stable hash may keep a buffer
	hot    *exchange.HotKeys[K] // prompt: the keys it deposits; the others go raw
	wm     int64                // the watermark of its last marker
	wmRun  bool                 // wm is this run's (not before a restore)
	tc     window.TumblingCache
	raw    *exchange.KeyEx[K, T] // cold keys' records, and the markers
	cur    *deposit[K, T]
	table  *partition.Table // the table cur's records are routed by
	pkg    *partition.TwoChoices
	busy   time.Duration
	timing bool
	rawN   int64 // records sent raw, ever
}

func NewMicroEx[K comparable, T, A any](x *MicroShared[K, T, A], ctx dataflow.ExchangeCtx, j *dataflow.Graph) *microEx[K, T, A] {
	if err := x.wire(ctx); err != nil {
		// The edge's wire has the same codecs, and the window refuses a
		// parallelism that leaves a process without an instance.
		panic(err)
	}
	e := &microEx[K, T, A]{
		x:    x,
		i:    ctx.Sender,
		hash: exchange.KeyHasher[K](j.StableHash()),
		// Following the schedule, its markers enter each epoch: a table
		// taking force at an epoch a sender has entered is refused.
		raw:    exchange.NewKeyEx(x.key, ctx.Routing, ctx.Outlets, j.Cfg.BatchSize, ctx.Dist).Follow(ctx.Schedule),
		timing: x.elastic != nil,
		wm:     progress.NoWatermark,
		// Restored, the sender does not know the watermark the window
		// has until its first marker: it deposits records until then,
		// and the round decides what is late.
		wmRun: ctx.From == 0,
	}
	if x.strategy == partition.PKG {
		e.pkg = partition.NewTwoChoices(len(ctx.Outlets))
	} else {
		e.hot = exchange.NewHotKeys[K](len(ctx.Outlets))
	}
	e.cur = e.newDeposit()
	e.enter(ctx.Routing)
	return e
}

// Counting says that the aggregator reads no record and adds n records to
// an accumulator with addN (nil: it reads them). Over tumbling or global
// windows, a deposit then keeps each key's count per window instead of its
// records; sliding windows, where one record counts in several, keep
// records.
func (x *MicroShared[K, T, A]) Counting(addN func(A, int64) A) {
	if x.spec.Kind == window.Tumbling || x.spec.Kind == window.Global {
		x.addN = addN
	}
}

// enter starts a deposit of records routed by table t: a pkg sender
// chooses among the blocks of the instances t gives key groups to (the
// round folds as many).
func (e *microEx[K, T, A]) enter(t *partition.Table) {
	e.table = t
	e.cur.span = e.x.localSpan(t)
	e.cur.counting = e.x.addN != nil && e.wmRun
	if e.pkg != nil {
		e.pkg.Reset(e.cur.span)
	}
	if e.hot != nil {
		e.hot.Tasks = max(e.cur.span, 1)
	}
}

func (e *microEx[K, T, A]) newDeposit() *deposit[K, T] {
	// The count order is needed only when one sender's order is the
	// epoch's: with several senders the planner orders the sums.
	return &deposit[K, T]{sender: e.i, buf: partition.NewCountBuffer[K](e.x.senders == 1)}
}

func (e *microEx[K, T, A]) Push(b *dataflow.Batch[T]) error {
	var t0 time.Time
	if e.timing {
		t0 = e.x.now()
	}
	var err error
	raw := e.rawN
	if b.Sel != nil {
		for _, i := range b.Sel {
			if err = e.One(b, int(i)); err != nil {
				break
			}
		}
	} else {
		for i := range b.V {
			if err = e.One(b, i); err != nil {
				break
			}
		}
	}
	if e.timing {
		e.busy += e.x.now().Sub(t0)
	}
	if len(e.raw.Outlets) > 0 {
		// The sender's figures count them sent as they are deposited,
		// with the records its chain read (not at the epoch's end, which
		// an overloaded round can put off past a policy interval's); the
		// batches of records sent raw count themselves.
		e.raw.Outlets[0].Handed(b.Len() - int(e.rawN-raw))
	}
	return err
}

// One deposits record i of b, or sends it raw to its owner if its key is
// cold.
func (e *microEx[K, T, A]) One(b *dataflow.Batch[T], i int) error {
	v := b.V[i]
	k := e.x.key(v)
	h := e.hash(k)
	var ts int64
	if b.Ts != nil {
		ts = b.Ts[i]
	}
	hk := e.hot
	if hk != nil && !hk.Hot(h, k) {
		hk.Sampled(h, k)
		return e.sendRaw(h, k, ts, v)
	}
	d := e.cur
	var start, end int64
	if d.counting {
		var late bool
		if start, end, late = e.window(ts); late {
			return e.sendRaw(h, k, ts, v)
		}
	}
	s := d.buf.Add(h, k)
	if b.Ts != nil {
		if !d.timed {
			d.timed, d.minTs, d.maxTs = true, ts, ts
		}
		d.minTs, d.maxTs = min(d.minTs, ts), max(d.maxTs, ts)
	}
	if d.counting {
		d.count(s, start, end)
	} else {
		d.recs.Add(s, trec[T]{v, ts})
	}
	if e.pkg != nil {
		// PKG decides per record, in arrival order, from this sender's
		// loads; which of a slot's records went where does not matter to a
		// commutative fold, only how many.
		if int(s) == len(d.pkgBlock) {
			d.pkgBlock = append(d.pkgBlock, [2]int32{-1, -1})
			d.pkgCount = append(d.pkgCount, [2]int32{})
		}
		c := int32(e.pkg.Choose(h))
		pb := &d.pkgBlock[s]
		if pb[0] == c || pb[0] < 0 {
			pb[0] = c
			d.pkgCount[s][0]++
		} else {
			pb[1] = c
			d.pkgCount[s][1]++
		}
	}
	return nil
}

// Mark hands the epoch's deposit over and forwards the marker.
func (e *microEx[K, T, A]) Mark(m progress.Marker) error {
	x := e.x
	d := e.cur
	d.through, d.final = m.Epoch, m.Final
	if hk := e.hot; hk != nil {
		d.cold = append(d.cold[:0], hk.Cold...)
		clear(hk.Cold)
		hk.Roll()
	}
	var waitFrom time.Time
	for {
		x.mu.Lock()
		if len(x.pending[e.i]) < maxPending {
			break
		}
		x.mu.Unlock()
		if waitFrom.IsZero() {
			waitFrom = x.now()
		}
		select {
		case <-x.freed[e.i]:
		case <-x.done:
			return errStopping
		}
	}
	if !waitFrom.IsZero() && len(e.raw.Outlets) > 0 {
		// Held back by the rounds: backpressure, as a full channel.
		e.raw.Outlets[0].Blocked(x.now().Sub(waitFrom))
	}
	x.pending[e.i] = append(x.pending[e.i], d)
	if n := len(x.free[e.i]); n > 0 {
		e.cur = x.free[e.i][n-1]
		x.free[e.i] = x.free[e.i][:n-1]
	} else {
		e.cur = nil
	}
	x.mu.Unlock()
	if e.cur == nil {
		e.cur = e.newDeposit()
	}
	if e.timing {
		for b := int64(e.busy); ; {
			old := x.busy.Load()
			if old >= b || x.busy.CompareAndSwap(old, b) {
				break
			}
		}
		e.busy = 0
	}
	if err := e.raw.Mark(m); err != nil {
		return err
	}
	e.wm, e.wmRun = max(e.wm, m.Watermark), true
	// The records after m are routed by the table of the epoch after m.
	t := e.table
	if x.sched != nil {
		t = x.sched.At(uint64(m.Epoch) + 1)
	}
	e.enter(t)
	return nil
}

// localSpan is how many of this process's receivers are within t.Span()
// (the instances the operator runs on now), at least 1: a process whose
// receivers own no key group still folds what its senders deposit, on
// its first receiver, and posts it to the owners. It is kept for the
// newest table asked about: the senders ask at every marker, and a table
// changes rarely.
func (x *MicroShared[K, T, A]) localSpan(t *partition.Table) int {
	if c := x.spans.Load(); c != nil && c.t == t {
		return c.n
	}
	span, n := t.Span(), 0
	for _, r := range x.local {
		if r < span {
			n++
		}
	}
	n = max(n, 1)
	x.spans.Store(&tableSpan{t, n})
	return n
}

// tableSpan is a table and its span.
type tableSpan struct {
	t *partition.Table
	n int
}

var errStopping = errors.New("weir: job stopping")

// barrier is a reusable meeting point for n goroutines. The last to arrive
// runs leader before releasing the others. A stopping job releases every
// waiter with an error, as does a leader that panicked (its panic fails
// the job; the others must not go on with a half-made round).
type barrier struct {
	mu      sync.Mutex
	n       int
	arrived int
	gen     chan struct{}
	broken  bool
	done    <-chan struct{}
}

// wait returns whether this goroutine led.
func (b *barrier) wait(leader func()) (led bool, err error) {
	b.mu.Lock()
	ch := b.gen
	b.arrived++
	if b.arrived == b.n {
		ok := false
		defer func() {
			b.broken = b.broken || !ok
			b.arrived = 0
			b.gen = make(chan struct{})
			b.mu.Unlock()
			close(ch)
		}()
		if leader != nil {
			leader()
		}
		ok = true
		return true, nil
	}
	b.mu.Unlock()
	select {
	case <-ch:
		b.mu.Lock()
		broken := b.broken
		b.mu.Unlock()
		if broken {
			// The leader's panic is failing the job; returning before it
			// has would make this the job's error.
			<-b.done
			return false, errStopping
		}
		return false, nil
	case <-b.done:
		return false, errStopping
	}
}
