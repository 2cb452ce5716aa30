package prompt

import (
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/exchange"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/window"
)

// MicroTask is one receiver's part of the rounds.
type MicroTask[K comparable, T, A any] struct {
	x      *MicroShared[K, T, A]
	i      int
	acc    keySets[A] // map task
	racc   keySets[A] // reducer
	tc     window.TumblingCache
	out    [][]mpart[A]               // per reducer: this map task's partials
	late   [][]dataflow.Krec[K, T]    // per owner: records to route as they are
	owned  [][]exchange.Partial[K, A] // per owner: this reducer's merged partials
	folded int64                      // records this map task took
	owner  func(h uint64) int32       // key group owner among the receivers
	sink   MicroOwner[K, T, A]        // this receiver's window state
	wm     func() int64               // this receiver's watermark before the round
	// took and waited are the records its map tasks folded and the time
	// it waited at the barrier, since the last Round.
	took   int64
	waited time.Duration
}

// MicroOwner is the window operator's side: it takes merged partials and
// raw records into its state.
type MicroOwner[K comparable, T, A any] interface {
	MergeOne(p *exchange.Partial[K, A])
	Add(r *dataflow.Krec[K, T])
}

// NewMicroTask is receiver i's part of the rounds; sink is its window
// state, wm its watermark and p where the receivers run.
func NewMicroTask[K comparable, T, A any](x *MicroShared[K, T, A], i int, sink MicroOwner[K, T, A], wm func() int64, p Placement) (*MicroTask[K, T, A], error) {
	t := &MicroTask[K, T, A]{x: x, i: i, sink: sink, wm: wm}
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.place(p); err != nil {
		return nil, err
	}
	for len(x.tasksOut) <= i {
		x.tasksOut = append(x.tasksOut, nil)
	}
	x.tasksOut[i] = t
	return t, nil
}

// Run is receiver t.i's round for the aligned marker m, before the
// receiver applies m's watermark.
func (t *MicroTask[K, T, A]) Run(m progress.Marker) error {
	x := t.x
	if err := t.meet(func() { x.lead(m) }); err != nil {
		return err
	}
	t.mapTask()
	t.took += t.folded
	if err := t.meet(x.afterMap); err != nil {
		return err
	}
	t.reduceTask()
	if err := t.meet(x.afterReduce); err != nil {
		return err
	}
	if x.net != nil && x.net.err != nil {
		return x.net.err
	}
	t.own()
	now := x.now().UnixNano()
	for {
		f := x.finish.Load()
		if f >= now || x.finish.CompareAndSwap(f, now) {
			return nil
		}
	}
}

// meet waits at the barrier for the other receivers, counting the time
// it waited (the last to arrive leads, and waits for none).
func (t *MicroTask[K, T, A]) meet(leader func()) error {
	t0 := t.x.now()
	led, err := t.x.bar.wait(leader)
	if !led {
		t.waited += t.x.now().Sub(t0)
	}
	return err
}

// Round returns the records this receiver's map tasks took since the
// last call, and the time it waited for the other receivers: a round
// does the work of records no batch brought it, and waits as an input
// would.
func (t *MicroTask[K, T, A]) Round() (records int64, waited time.Duration) {
	records, waited = t.took, t.waited
	t.took, t.waited = 0, 0
	return records, waited
}

// lead takes the deposits the aligned marker m completes, merges their
// statistics into global key numbers and plans the round.
func (x *MicroShared[K, T, A]) lead(m progress.Marker) {
	now := x.now()
	x.follow(m)
	if x.elastic != nil {
		// An epoch's processing time: the longest any sender spent
		// buffering it, plus the last round's plan, map and reduce.
		busy := time.Duration(x.busy.Swap(0))
		if f := x.finish.Load(); f > 0 && !x.start.IsZero() {
			busy += time.Duration(f - x.start.UnixNano())
		}
		if _, changed := x.elastic.Observe(busy, x.interval); changed {
			x.stats.Changed(x.elastic.Tasks(), busy, x.interval)
		}
	}
	x.start = now
	x.finish.Store(0)
	if x.net != nil {
		x.net.epoch = uint64(m.Epoch)
	}
	// A sender's oldest pending deposit belongs to this round unless its
	// consumed deposits already ended this epoch (it is ahead).
	x.round = x.round[:0]
	x.mu.Lock()
	for i := range x.pending {
		for len(x.pending[i]) > 0 && (m.Final || (!x.finalSeen[i] && x.next[i] <= m.Epoch)) {
			d := x.pending[i][0]
			x.pending[i] = x.pending[i][1:]
			x.next[i] = d.through + 1
			x.finalSeen[i] = x.finalSeen[i] || d.final
			x.round = append(x.round, d)
			if !m.Final {
				break
			}
		}
	}
	x.mu.Unlock()
	x.number()
	switch {
	case x.elastic != nil:
		x.tasks = x.elastic.Tasks()
	case x.strategy == partition.PKG:
		// Every block a sender chose is folded: as many tasks as the
		// widest of the round's senders chose among.
		x.tasks = 1
		for _, d := range x.round {
			x.tasks = max(x.tasks, d.span)
		}
		x.tasks = min(x.tasks, len(x.local))
	default:
		x.tasks = x.span
	}
	if x.strategy == partition.Prompt {
		var byCount []int32
		if len(x.round) == 1 {
			byCount = x.round[0].buf.ByCount()
		}
		for len(x.frags) < x.receivers {
			x.frags = append(x.frags, nil)
		}
		for j := range x.frags {
			x.frags[j] = x.frags[j][:0]
		}
		if len(x.counts) > 0 {
			if base := x.coldBase(); base != nil {
				// The senders deposited only their hot keys: spread them
				// over what the cold keys' owners fold already.
				x.plan = x.planner.PromptOver(x.counts, byCount, base, x.tasks, x.tasks)
			} else {
				x.plan = x.planner.Prompt(x.counts, byCount, x.tasks, x.tasks)
			}
			// The planner counts one partial per fragment; when the epoch
			// spans several windows a fragment makes up to one per window.
			if w := x.windowsSpanned(); w > 1 {
				x.plan.Reweigh(func(_ int, f partition.Frag) int64 { return int64(min(f.Count, w)) }, &x.reweigher)
			}
			for g := range x.counts {
				lo := int32(0)
				for _, f := range x.plan.Fragments(g) {
					x.frags[f.Block] = append(x.frags[f.Block], fragRange{g: int32(g), lo: lo, hi: lo + f.Count})
					lo += f.Count
				}
			}
		}
	}
}

// number gives the round's keys global numbers, in the order the
// deposits first hold them, and counts their records.
func (x *MicroShared[K, T, A]) number() {
	clear(x.keys)
	x.keys, x.hashes, x.counts = x.keys[:0], x.hashes[:0], x.counts[:0]
	x.index.Clear()
	x.n = 0
	for _, d := range x.round {
		b := d.buf
		d.gid, d.off = d.gid[:0], d.off[:0]
		for slot := range int32(b.Keys()) {
			h, k := b.Hash(slot), b.Key(slot)
			n := x.index.Len()
			g := x.index.Upsert(h, k)
			if x.index.Len() > n {
				*g = int32(len(x.keys))
				x.keys = append(x.keys, k)
				x.hashes = append(x.hashes, h)
				x.counts = append(x.counts, 0)
			}
			d.gid = append(d.gid, *g)
			d.off = append(d.off, x.counts[*g])
			x.counts[*g] += b.Count(slot)
		}
		x.n += int64(b.Len())
	}
	for _, d := range x.round {
		d.slotOf = growFill(d.slotOf[:0], len(x.keys))
		for slot, g := range d.gid {
			d.slotOf[g] = int32(slot)
		}
	}
}

// follow takes the table the round routes to owners by: the one in force
// after the previous round, whose owners the receivers' handovers, run
// at the same markers as the rounds, have given the key groups' state.
// Every sender has entered the epoch after m before sending m, so no
// table can take force there any more.
func (x *MicroShared[K, T, A]) follow(m progress.Marker) {
	after := x.after
	x.rounds++
	x.after = uint64(m.Epoch) + 1
	if x.sched == nil || x.rounds == 1 {
		return
	}
	rt := x.sched.At(after)
	if rt == x.rt {
		return
	}
	span := x.localSpan(rt)
	x.rt = rt
	if span == x.span {
		return // a step that moves key groups among the same instances
	}
	x.span = span
	// The task count follows the load within the instances the operator
	// runs on now.
	if x.elastic != nil {
		if tasks, changed := x.elastic.Resize(x.span); changed {
			x.stats.Changed(tasks, 0, x.interval)
		}
	}
}

// windowsSpanned is how many windows the round's event times can fall in
// (at most 1024).
func (x *MicroShared[K, T, A]) windowsSpanned() int32 {
	spec := &x.spec
	var lo, hi int64
	timed := false
	for _, d := range x.round {
		if d.timed {
			if !timed {
				lo, hi, timed = d.minTs, d.maxTs, true
			}
			lo, hi = min(lo, d.minTs), max(hi, d.maxTs)
		}
	}
	if !timed {
		return 1
	}
	return int32(min(max(spec.Spanned(lo, hi), 1), 1024))
}

// mapTask folds block t.i into partials per reducer.
func (t *MicroTask[K, T, A]) mapTask() {
	x := t.x
	for len(t.out) < x.receivers {
		t.out = append(t.out, nil)
		t.late = append(t.late, nil)
		t.owned = append(t.owned, nil)
	}
	for r := range t.out {
		clear(t.out[r])
		t.out[r] = t.out[r][:0]
		clear(t.late[r])
		t.late[r] = t.late[r][:0]
	}
	t.folded = 0
	li := x.pos[t.i]
	if li >= x.tasks || len(x.keys) == 0 {
		return
	}
	t.acc.reset(len(x.keys))
	switch x.strategy {
	case partition.Prompt:
		for _, f := range x.frags[li] {
			for _, d := range x.round {
				slot := d.slotOf[f.g]
				if slot < 0 {
					continue
				}
				// This deposit's records of the key are [off, off+n) of
				// the key's; the fragment takes [lo, hi) of those.
				off := d.off[slot]
				lo, hi := max(f.lo, off), min(f.hi, off+d.buf.Count(slot))
				if lo < hi {
					t.fold(d, slot, f.g, int(lo-off), int(hi-off))
				}
			}
		}
	case partition.PKG:
		j := int32(li)
		for _, d := range x.round {
			for slot, pb := range d.pkgBlock {
				c := d.pkgCount[slot]
				switch j {
				case pb[0]:
					t.fold(d, int32(slot), d.gid[slot], 0, int(c[0]))
				case pb[1]:
					t.fold(d, int32(slot), d.gid[slot], int(c[0]), int(c[0]+c[1]))
				}
			}
		}
	}
	t.acc.drain(func(g int32, w *window.Win[A]) {
		red := t.reducer(g)
		t.out[red] = append(t.out[red], mpart[A]{g: g, start: w.Start, end: w.End, acc: w.Acc})
	})
}

// fold folds records [lo, hi) of deposit d's slot (global key g) into the
// map task's partials; records that may be late go to their owner raw.
func (t *MicroTask[K, T, A]) fold(d *deposit[K, T], slot, g int32, lo, hi int) {
	if d.counting {
		t.foldCounts(d, slot, g, lo, hi)
		return
	}
	x := t.x
	spec := &x.spec
	wm := t.wm()
	set := t.acc.Entry(g)
	t.folded += int64(hi - lo)
	d.recs.Range(slot, lo, hi, func(run []trec[T]) {
		for i := range run {
			v, ts := run[i].v, run[i].ts
			switch spec.Kind {
			case window.Global:
				w := set.Get(window.GlobalStart, window.GlobalEnd, x.init)
				w.Acc = x.add(w.Acc, v)
				continue
			case window.Tumbling:
				start, end, ok := t.tc.Window(ts, spec.Size)
				if !ok {
					panic(dataflow.BadWindowTime(ts, *spec))
				}
				if !spec.Late(end, wm) {
					w := set.Get(start, end, x.init)
					w.Acc = x.add(w.Acc, v)
					continue
				}
			default:
				late := false
				spec.Assign(ts, func(_, end int64) {
					late = late || spec.Late(end, wm)
				})
				if !late {
					spec.Assign(ts, func(start, end int64) {
						w := set.Get(start, end, x.init)
						w.Acc = x.add(w.Acc, v)
					})
					continue
				}
			}
			h := x.hashes[g]
			o := t.ownerOf(h)
			t.late[o] = append(t.late[o], dataflow.Krec[K, T]{H: h, Ts: ts, K: x.keys[g], V: v})
		}
	})
}

func (t *MicroTask[K, T, A]) ownerOf(h uint64) int {
	return t.x.rt.Route(h)
}

// reducer is the reducer of key g's partial from this map task.
func (t *MicroTask[K, T, A]) reducer(g int32) int {
	x := t.x
	if x.strategy == partition.Prompt {
		for _, f := range x.plan.Fragments(int(g)) {
			if int(f.Block) == x.pos[t.i] {
				return int(f.Reducer)
			}
		}
		panic("weir: a map task folded a key the plan did not give it")
	}
	return partition.HashIndex(x.hashes[g], x.tasks)
}

// afterMap runs on the last map task to finish: it accounts the round and
// gives the deposits back to their senders.
func (x *MicroShared[K, T, A]) afterMap() {
	if x.n > 0 || x.coldRecords() > 0 {
		// A record sent raw is folded by its owner: map work. The
		// reducers' load is the partials they merge.
		mapLoad := make([]int64, x.tasks)
		redLoad := make([]int64, x.tasks)
		for _, d := range x.round {
			for o, c := range d.cold {
				if li := x.pos[o]; c > 0 && li >= 0 {
					mapLoad = growTo(mapLoad, li+1)
					mapLoad[li] += c
				}
			}
		}
		var frags int64
		for j, t := range x.tasksOut {
			if t == nil {
				continue
			}
			if li := x.pos[j]; li < x.tasks {
				mapLoad[li] += t.folded
			}
			for r, o := range t.out {
				if r < x.tasks {
					redLoad[r] += int64(len(o))
					frags += int64(len(o))
				}
			}
		}
		split := int64(0)
		if x.strategy == partition.Prompt && len(x.counts) > 0 {
			split, frags = int64(x.plan.SplitKeys), int64(len(x.plan.Frags))
		}
		x.stats.AddRound(mapLoad, redLoad, split, frags, x.tasks)
	}
	x.mu.Lock()
	for _, d := range x.round {
		d.buf.Reset()
		d.recs.Reset()
		d.wins.Reset()
		d.pkgBlock, d.pkgCount = d.pkgBlock[:0], d.pkgCount[:0]
		d.timed = false
		x.free[d.sender] = append(x.free[d.sender], d)
		select {
		case x.freed[d.sender] <- struct{}{}:
		default:
		}
	}
	x.mu.Unlock()
	clear(x.round)
	x.round = x.round[:0]
}

// growTo returns s with length at least n, zeros added.
func growTo(s []int64, n int) []int64 {
	for len(s) < n {
		s = append(s, 0)
	}
	return s
}

// coldBase is the records the round's senders sent raw to each of the
// round's tasks, or nil if they sent none.
func (x *MicroShared[K, T, A]) coldBase() []int64 {
	if x.coldRecords() == 0 {
		return nil
	}
	x.base = growTo(x.base[:0], x.tasks)
	clear(x.base)
	for _, d := range x.round {
		for o, c := range d.cold {
			if li := x.pos[o]; li >= 0 && li < x.tasks {
				x.base[li] += c
			}
		}
	}
	return x.base
}

// coldRecords is how many records the round's senders sent raw.
func (x *MicroShared[K, T, A]) coldRecords() (n int64) {
	for _, d := range x.round {
		for _, c := range d.cold {
			n += c
		}
	}
	return n
}

// reduceTask merges the partials for reducer t.i and hands them to their
// owners.
func (t *MicroTask[K, T, A]) reduceTask() {
	x := t.x
	for o := range t.owned {
		clear(t.owned[o])
		t.owned[o] = t.owned[o][:0]
	}
	li := x.pos[t.i]
	if li >= x.tasks || len(x.keys) == 0 {
		return
	}
	t.racc.reset(len(x.keys))
	for _, m := range x.tasksOut {
		if m == nil || li >= len(m.out) {
			continue
		}
		for _, p := range m.out[li] {
			set := t.racc.Entry(p.g)
			if w := set.Find(p.start, p.end); w != nil {
				w.Acc = x.merge(w.Acc, p.acc)
			} else {
				set.W = append(set.W, window.Win[A]{Start: p.start, End: p.end, Acc: p.acc})
			}
		}
	}
	t.racc.drain(func(g int32, w *window.Win[A]) {
		h := x.hashes[g]
		o := t.ownerOf(h)
		t.owned[o] = append(t.owned[o], exchange.Partial[K, A]{H: h, K: x.keys[g], Start: w.Start, End: w.End, Acc: w.Acc})
	})
}

// afterReduce forgets the round's keys and map partials, which may point
// into input buffers.
func (x *MicroShared[K, T, A]) afterReduce() {
	clear(x.keys)
	x.keys = x.keys[:0]
	x.index.Clear()
	// The map partials are merged: their accumulators may hold input data.
	for _, t := range x.tasksOut {
		if t == nil {
			continue
		}
		for r := range t.out {
			clear(t.out[r])
			t.out[r] = t.out[r][:0]
		}
	}
	if x.net != nil {
		x.net.exchange()
	}
}

// own takes what receiver t.i owns into its window state, then forgets
// it (keys may point into input buffers). t.i is the only reader of each
// q.owned[t.i] and q.late[t.i]; q writes them again only in the next round.
func (t *MicroTask[K, T, A]) own() {
	if n := t.x.net; n != nil {
		n.own(t)
	}
	for _, q := range t.x.tasksOut {
		if q == nil {
			continue
		}
		if t.i < len(q.owned) {
			for i := range q.owned[t.i] {
				t.sink.MergeOne(&q.owned[t.i][i])
			}
			clear(q.owned[t.i])
			q.owned[t.i] = q.owned[t.i][:0]
		}
		if t.i < len(q.late) {
			for i := range q.late[t.i] {
				t.sink.Add(&q.late[t.i][i])
			}
			clear(q.late[t.i])
			q.late[t.i] = q.late[t.i][:0]
		}
	}
}
