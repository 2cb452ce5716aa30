package weir

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/state"
	"github.com/weirstream/weir/internal/window"
)

// microEx is the sending side of the exchange into a window aggregation
// under the prompt and pkg strategies: the exchange's senders treat each
// epoch as one micro-batch, as Prompt (Abdelhamid et al., SIGMOD 2020)
// does.
//
//  1. Buffer. While the epoch's records arrive, each sender keeps them in a
//     frequency-aware buffer (partition.Buffer): per key a count and a
//     chain of its records, keys ordered by count online.
//  2. Plan. When every sender has ended the epoch they meet; the last to
//     arrive merges the buffers' statistics (global key numbers, counts)
//     and plans the epoch: the map blocks, with hot keys split into as
//     few fragments as balance allows, and the key -> reducer table, both
//     before any map task runs. The number of tasks comes from the
//     elastic controller (prompt only).
//  3. Assign. Each sender cuts its own buffer into the blocks of the plan,
//     key by key along the chains (so a block holds each key's records
//     together).
//  4. Map. Map task j (run by sender j) folds block j, whatever sender
//     buffered its records, into one partial per key and window, and
//     hands each partial to the reducer of the table.
//  5. Reduce. Reducer r (run by sender r) merges the partials it was given
//     (a split key's fragments meet here: two-level aggregation) and sends
//     one partial per key and window to the key group's owner, the window
//     operator, which merges it into its state: results are exact
//     whatever the split.
//
// Steps 3-5 hand over through memory; senders meet between them. Every
// sender then forwards the same marker: the round's epoch, the minimum
// watermark over the senders (map tasks send records that other senders
// buffered, so each must promise only what all promise) and the earliest
// cut. A sender that is ahead (its marker ended later epochs, or it is
// final) keeps taking part in rounds until the round reaches its epoch, so
// a round only holds records of epochs up to its own.
//
// Lateness is decided as the combiner decides it: a record whose windows
// might be past cleanup at the downstream watermark (the previous round's)
// is sent raw to its owner, which routes it to the late output.
type microEx[K comparable, T, A any] struct {
	r   *microRound[K, T, A]
	i   int
	raw *keyEx[K, T]

	// The epoch's buffer.
	buf  *partition.Buffer[K]
	recs []T
	ts   []int64

	// busy is the time spent buffering since the last round (measured only
	// for the elastic controller).
	busy time.Duration
	// small counts the rounds in a row that used far less than recs holds.
	small int

	// The last deposit.
	through progress.Epoch
	final   bool
	wm      int64
	cut     int64
	fresh   bool

	// Assignment of this sender's records to blocks: record indices and
	// their keys' global numbers.
	lists [][]int32
	keyOf [][]int32
	gid   []int32 // per slot: global key number
	off   []int32 // per slot: records of the key at senders before this one
	pkg   *partition.TwoChoices

	// Map task: accumulators by global key, and the partials per reducer.
	acc    keySets[A]
	tc     window.TumblingCache
	out    [][]mpart[A]
	folded int64

	// Reduce task.
	racc keySets[A]
	cur  []*pbatch[K, A]
	pool *sync.Pool
}

// keySets is the windows of the keys a task touched in a round, indexed by
// global key number through a dense array.
type keySets[A any] struct {
	loc     []int32 // global key -> index in sets, or -1
	sets    []window.Set[A]
	touched []int32 // global keys, in the order of sets
}

// reset sizes the index for n global keys.
func (k *keySets[A]) reset(n int) { k.loc = growFill(k.loc, n) }

// entry returns the window set of global key g.
func (k *keySets[A]) entry(g int32) *window.Set[A] {
	li := k.loc[g]
	if li < 0 {
		li = int32(len(k.touched))
		k.loc[g] = li
		k.touched = append(k.touched, g)
		if len(k.sets) <= int(li) {
			k.sets = append(k.sets, window.Set[A]{})
		}
	}
	return &k.sets[li]
}

// drain calls f for every touched key's windows and forgets them.
func (k *keySets[A]) drain(f func(g int32, w *window.Win[A]) error) error {
	for li, g := range k.touched {
		set := &k.sets[li]
		for i := range set.W {
			if err := f(g, &set.W[i]); err != nil {
				return err
			}
		}
		clear(set.W)
		set.W = set.W[:0]
		k.loc[g] = -1
	}
	k.touched = k.touched[:0]
	return nil
}

// mpart is a map task's partial for a reducer: global key number, window,
// accumulator.
type mpart[A any] struct {
	g          int32
	start, end int64
	acc        A
}

// microRound is what the senders of one microEx exchange share.
type microRound[K comparable, T, A any] struct {
	senders  []*microEx[K, T, A]
	bar      barrier
	strategy partition.Strategy
	spec     window.Spec
	init     func() A
	add      func(A, T) A
	merge    func(A, A) A
	stats    *edgeStats
	interval time.Duration

	planner partition.Planner
	plan    *partition.Plan
	elastic *partition.Elastic
	tasks   int // map and reduce tasks of the round
	n       int64
	prefix  []int64 // per sender: records buffered by the senders before it

	// The round's keys over all senders.
	index  *state.Table[K, int32]
	keys   []K
	hashes []uint64
	counts []int32

	marker progress.Marker
	prevWm int64
	start  time.Time
	finish atomic.Int64 // unix nanos: the last reducer's end
	joined int          // senders made so far
}

var errStopping = errors.New("weir: job stopping")

// barrier is a reusable meeting point for n goroutines. The last to arrive
// runs leader before releasing the others. A stopping job releases every
// waiter with an error.
type barrier struct {
	mu      sync.Mutex
	n       int
	arrived int
	gen     chan struct{}
	done    <-chan struct{}
}

func (b *barrier) wait(leader func()) error {
	b.mu.Lock()
	ch := b.gen
	b.arrived++
	if b.arrived == b.n {
		func() {
			defer func() {
				b.arrived = 0
				b.gen = make(chan struct{})
				b.mu.Unlock()
				close(ch)
			}()
			if leader != nil {
				leader()
			}
		}()
		return nil
	}
	b.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-b.done:
		return errStopping
	}
}

func newMicroEx[K comparable, T, A any](x exchangeCtx, key func(T) K, j *Job, st *edgeStats, strategy partition.Strategy,
	spec window.Spec, init func() A, add func(A, T) A, merge func(A, A) A) *microEx[K, T, A] {
	r := x.shared.get(func() any {
		r := &microRound[K, T, A]{
			senders:  make([]*microEx[K, T, A], x.senders),
			strategy: strategy,
			spec:     spec,
			init:     init,
			add:      add,
			merge:    merge,
			stats:    st,
			index:    state.NewTable[K, int32](0),
			prevWm:   progress.NoWatermark,
			prefix:   make([]int64, x.senders+1),
		}
		if strategy == partition.Prompt && j.cfg.epochRecords == 0 {
			r.interval = j.cfg.interval
			r.elastic = partition.NewElastic(x.senders)
		}
		r.bar = barrier{n: x.senders, gen: make(chan struct{}), done: x.done}
		return r
	}).(*microRound[K, T, A])
	e := &microEx[K, T, A]{
		r:   r,
		i:   x.sender,
		raw: newKeyEx(key, j.cfg.keyGroups, x.outlets, j.cfg.batchSize),
		buf: partition.NewBuffer[K](),
		wm:  progress.NoWatermark,
	}
	size := j.cfg.batchSize
	e.pool = &sync.Pool{New: func() any {
		return &pbatch[K, A]{recs: make([]partial[K, A], 0, size), pool: e.pool}
	}}
	e.cur = make([]*pbatch[K, A], len(x.outlets))
	for t := range e.cur {
		e.cur[t] = e.pool.Get().(*pbatch[K, A])
	}
	r.senders[x.sender] = e
	st.init(x.senders, len(x.outlets))
	return e
}

func (e *microEx[K, T, A]) push(b *batch[T]) error {
	var t0 time.Time
	if e.r.elastic != nil {
		t0 = time.Now()
	}
	if b.sel != nil {
		for _, i := range b.sel {
			e.one(b, int(i))
		}
	} else {
		for i := range b.v {
			e.one(b, i)
		}
	}
	if e.r.elastic != nil {
		e.busy += time.Since(t0)
	}
	return nil
}

func (e *microEx[K, T, A]) one(b *batch[T], i int) {
	v := b.v[i]
	k := e.raw.key(v)
	e.buf.Add(e.raw.hash(k), k)
	e.recs = append(e.recs, v)
	if b.ts != nil {
		e.ts = append(e.ts, b.ts[i])
	}
}

// mark deposits the epoch and takes part in rounds until the rounds have
// reached this sender's epoch.
func (e *microEx[K, T, A]) mark(m progress.Marker) error {
	e.through, e.final, e.cut, e.fresh = m.Epoch, m.Final, m.Cut, true
	e.wm = max(e.wm, m.Watermark)
	if m.Final {
		e.wm = progress.MaxWatermark
	}
	r := e.r
	for {
		if err := r.bar.wait(r.lead); err != nil {
			return err
		}
		if err := e.round(); err != nil {
			return err
		}
		done := r.marker.Final || (!e.final && r.marker.Epoch >= e.through)
		if err := e.forward(r.marker); err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// lead runs on the last sender to arrive: it accounts the elastic
// controller, merges the statistics and plans the round.
func (r *microRound[K, T, A]) lead() {
	now := time.Now()
	if r.elastic != nil {
		// An epoch's processing time: the longest any sender spent
		// buffering it, plus the last round's plan, map and reduce.
		var busy time.Duration
		for _, s := range r.senders {
			busy = max(busy, s.busy)
			s.busy = 0
		}
		if f := r.finish.Load(); f > 0 && !r.start.IsZero() {
			busy += time.Duration(f - r.start.UnixNano())
		}
		if _, changed := r.elastic.Observe(busy, r.interval); changed {
			r.stats.changed(r.elastic.Tasks())
		}
	}
	if !r.start.IsZero() {
		r.prevWm = max(r.prevWm, r.marker.Watermark)
	}
	r.start = now
	// The round's marker.
	m := progress.Marker{Watermark: progress.MaxWatermark}
	live := false
	var high progress.Epoch
	for _, s := range r.senders {
		high = max(high, s.through)
		m.Watermark = min(m.Watermark, s.wm)
		if !s.final && (!live || s.through < m.Epoch) {
			m.Epoch, live = s.through, true
		}
		if s.fresh && s.cut != 0 && (m.Cut == 0 || s.cut < m.Cut) {
			m.Cut = s.cut
		}
	}
	if !live {
		m.Epoch, m.Final = high, true
	}
	m.Watermark = max(m.Watermark, r.prevWm)
	r.marker = m
	// Merge the statistics into global key numbers.
	clear(r.keys)
	r.keys, r.hashes, r.counts = r.keys[:0], r.hashes[:0], r.counts[:0]
	r.index.Clear()
	r.n = 0
	for i, s := range r.senders {
		r.prefix[i] = r.n
		s.gid, s.off = s.gid[:0], s.off[:0]
		if !s.fresh {
			continue
		}
		b := s.buf
		for slot := range int32(b.Keys()) {
			h, k := b.Hash(slot), b.Key(slot)
			n := r.index.Len()
			g := r.index.Upsert(h, k)
			if r.index.Len() > n {
				*g = int32(len(r.keys))
				r.keys = append(r.keys, k)
				r.hashes = append(r.hashes, h)
				r.counts = append(r.counts, 0)
			}
			s.gid = append(s.gid, *g)
			s.off = append(s.off, r.counts[*g])
			r.counts[*g] += b.Count(slot)
		}
		r.n += int64(b.Len())
	}
	r.prefix[len(r.senders)] = r.n
	r.tasks = len(r.senders)
	if r.elastic != nil {
		r.tasks = r.elastic.Tasks()
	}
	if r.strategy == partition.Prompt {
		var byCount []int32
		if len(r.senders) == 1 && r.senders[0].fresh {
			byCount = r.senders[0].buf.ByCount()
		}
		if len(r.counts) > 0 {
			r.plan = r.planner.Prompt(r.counts, byCount, r.tasks, r.tasks)
		}
	}
	r.finish.Store(0)
}

// round runs steps 3-5 for this sender.
func (e *microEx[K, T, A]) round() error {
	r := e.r
	e.assign()
	if err := r.bar.wait(nil); err != nil {
		return err
	}
	if err := e.mapTask(); err != nil {
		return err
	}
	if err := r.bar.wait(r.account); err != nil {
		return err
	}
	// Every map task is done with the buffers.
	if e.fresh {
		e.buf.Reset()
		clear(e.recs)
		if cap(e.recs) > 4096 && len(e.recs)*16 < cap(e.recs) {
			e.small++
		} else {
			e.small = 0
		}
		if e.small >= 8 { // far smaller epochs for a while: drop the peak's memory
			e.recs, e.ts, e.small = nil, nil, 0
		}
		e.recs, e.ts = e.recs[:0], e.ts[:0]
		e.fresh = false
	}
	err := e.reduceTask()
	now := time.Now().UnixNano()
	for {
		f := r.finish.Load()
		if f >= now || r.finish.CompareAndSwap(f, now) {
			break
		}
	}
	return err
}

// assign cuts this sender's buffer into the round's blocks.
func (e *microEx[K, T, A]) assign() {
	r := e.r
	for len(e.lists) < len(r.senders) {
		e.lists = append(e.lists, nil)
		e.keyOf = append(e.keyOf, nil)
	}
	for j := range e.lists {
		e.lists[j], e.keyOf[j] = e.lists[j][:0], e.keyOf[j][:0]
	}
	if !e.fresh {
		return
	}
	b := e.buf
	switch r.strategy {
	case partition.Prompt:
		for slot := range int32(b.Keys()) {
			g := e.gid[slot]
			frags := r.plan.Fragments(int(g))
			rank := e.off[slot] // records of the key before this sender's
			f := 0
			for rank >= frags[f].Count {
				rank -= frags[f].Count
				f++
			}
			left := frags[f].Count - rank
			for rec := b.Head(slot); rec >= 0; rec = b.Next(rec) {
				if left == 0 {
					f++
					left = frags[f].Count
				}
				left--
				blk := frags[f].Block
				e.lists[blk] = append(e.lists[blk], rec)
				e.keyOf[blk] = append(e.keyOf[blk], g)
			}
		}
	case partition.PKG:
		if e.pkg == nil {
			e.pkg = partition.NewTwoChoices(r.tasks)
		}
		e.pkg.Reset(r.tasks)
		for rec := range int32(b.Len()) {
			g := e.gid[b.SlotOf(rec)]
			blk := e.pkg.Choose(r.hashes[g])
			e.lists[blk] = append(e.lists[blk], rec)
			e.keyOf[blk] = append(e.keyOf[blk], g)
		}
	}
}

// mapTask folds block e.i into partials per reducer.
func (e *microEx[K, T, A]) mapTask() error {
	r := e.r
	for t := range e.out {
		clear(e.out[t])
		e.out[t] = e.out[t][:0]
	}
	for len(e.out) < len(r.senders) {
		e.out = append(e.out, nil)
	}
	e.folded = 0
	if e.i >= r.tasks {
		return nil
	}
	e.acc.reset(len(r.keys))
	spec := &r.spec
	for _, s := range r.senders {
		if e.i >= len(s.lists) {
			continue
		}
		recs, keys := s.lists[e.i], s.keyOf[e.i]
		for x, rec := range recs {
			g := keys[x]
			v := s.recs[rec]
			var ts int64
			if len(s.ts) > 0 {
				ts = s.ts[rec]
			}
			e.folded++
			if spec.Kind != window.Global && e.mayBeLate(ts) {
				if err := e.raw.send(r.hashes[g], r.keys[g], ts, v); err != nil {
					return err
				}
				continue
			}
			set := e.acc.entry(g)
			if spec.Kind == window.Tumbling {
				start, end := e.tc.Window(ts, spec.Size)
				w := set.Get(start, end, r.init)
				w.Acc = r.add(w.Acc, v)
			} else {
				spec.Assign(ts, func(start, end int64) {
					w := set.Get(start, end, r.init)
					w.Acc = r.add(w.Acc, v)
				})
			}
		}
	}
	return e.acc.drain(func(g int32, w *window.Win[A]) error {
		red := e.reducer(g)
		e.out[red] = append(e.out[red], mpart[A]{g: g, start: w.Start, end: w.End, acc: w.Acc})
		return nil
	})
}

// mayBeLate reports whether a record at ts has a window that may be past
// cleanup downstream; such a record is sent raw.
func (e *microEx[K, T, A]) mayBeLate(ts int64) bool {
	spec, wm := &e.r.spec, e.r.prevWm
	if spec.Kind == window.Tumbling {
		_, end := e.tc.Window(ts, spec.Size)
		return spec.Late(end, wm)
	}
	late := false
	spec.Assign(ts, func(_, end int64) {
		if spec.Late(end, wm) {
			late = true
		}
	})
	return late
}

// reducer is the reducer of key g's partial from this map task.
func (e *microEx[K, T, A]) reducer(g int32) int {
	r := e.r
	if r.strategy == partition.Prompt {
		for _, f := range r.plan.Fragments(int(g)) {
			if int(f.Block) == e.i {
				return int(f.Reducer)
			}
		}
		panic("weir: a map task folded a key the plan did not give it")
	}
	return partition.HashIndex(r.hashes[g], r.tasks)
}

// account runs on the last map task to finish: it adds the round's loads
// to the statistics.
func (r *microRound[K, T, A]) account() {
	if r.n == 0 {
		return
	}
	mapLoad := make([]int64, r.tasks)
	redLoad := make([]int64, r.tasks)
	var frags int64
	for j, s := range r.senders {
		if j < r.tasks {
			mapLoad[j] = s.folded
		}
		for t, o := range s.out {
			if t < r.tasks {
				redLoad[t] += int64(len(o))
				frags += int64(len(o))
			}
		}
	}
	split := int64(0)
	if r.strategy == partition.Prompt {
		split, frags = int64(r.plan.SplitKeys), int64(len(r.plan.Frags))
	}
	r.stats.addRound(mapLoad, redLoad, split, frags, r.tasks)
}

// reduceTask merges the partials for reducer e.i and sends them to the
// owners.
func (e *microEx[K, T, A]) reduceTask() error {
	r := e.r
	if e.i >= r.tasks {
		return nil
	}
	e.racc.reset(len(r.keys))
	for _, s := range r.senders {
		if e.i >= len(s.out) {
			continue
		}
		for _, p := range s.out[e.i] {
			set := e.racc.entry(p.g)
			if w := set.Find(p.start, p.end); w != nil {
				w.Acc = r.merge(w.Acc, p.acc)
			} else {
				set.W = append(set.W, window.Win[A]{Start: p.start, End: p.end, Acc: p.acc})
			}
		}
	}
	raw := e.raw
	return e.racc.drain(func(g int32, w *window.Win[A]) error {
		h := r.hashes[g]
		t := raw.owner[partition.KeyGroupOf(h, raw.groups)]
		pb := e.cur[t]
		pb.recs = append(pb.recs, partial[K, A]{h: h, k: r.keys[g], start: w.Start, end: w.End, acc: w.Acc})
		if len(pb.recs) >= raw.size {
			return e.flush(int(t))
		}
		return nil
	})
}

func (e *microEx[K, T, A]) flush(t int) error {
	p := e.cur[t]
	if len(p.recs) == 0 {
		return nil
	}
	e.cur[t] = e.pool.Get().(*pbatch[K, A])
	return e.raw.outlets[t].Send(p)
}

// forward sends this sender's partials and the round's marker.
func (e *microEx[K, T, A]) forward(m progress.Marker) error {
	for t := range e.cur {
		if err := e.flush(t); err != nil {
			return err
		}
	}
	return e.raw.mark(m)
}

// growFill returns s with length n, every element -1.
func growFill(s []int32, n int) []int32 {
	if cap(s) < n {
		s = make([]int32, n, n+n/4)
		for i := range s {
			s[i] = -1
		}
		return s
	}
	old := len(s)
	s = s[:n]
	for i := old; i < n; i++ {
		s[i] = -1
	}
	return s
}
