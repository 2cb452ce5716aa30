package engine

import (
	"errors"
	"fmt"
	"sync"

	"github.com/weirstream/weir/internal/coord"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/exchange"
	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/transport"
)

// placement says which process runs which instance: the instances of an
// operator with parallelism g are spread over the processes in contiguous
// blocks (instance i on process i*procs/g), so one instance runs on
// process 0 and key-group ranges stay contiguous per process.
type placement struct{ self, procs int }

func (pl placement) proc(inst, par int) int { return inst * pl.procs / par }

func (pl placement) local(inst, par int) bool { return pl.proc(inst, par) == pl.self }

// instantiate makes the operator instances this process runs and wires
// the exchanges: to a local receiver through its inbox, to a remote one
// through the network (net is nil in a single process).
func (j *Job) instantiate(p *plan.Physical, rt *runtime.Runtime, pl placement, net transport.Network) error {
	if err := j.recoverInputs(pl); err != nil {
		return err
	}
	if err := j.restoredSchedules(); err != nil {
		return err
	}
	sp, err := j.newSplits(p, rt, net, pl)
	if err != nil {
		return err
	}
	if err := j.elasticSources(p, pl, sp); err != nil {
		return err
	}
	j.mu.Lock()
	j.handovers = newHandovers(rt, net, pl, j.slots, j.leaving)
	j.handovers.reuse.ckpt, j.handovers.reuse.off, j.handovers.reuse.always = j.coord, j.Cfg.NoCheckpointReuse, j.Cfg.AlwaysDeltas
	j.splits = sp
	j.mu.Unlock()
	for _, e := range p.Edges {
		if e.Exchange == plan.KeyGroup {
			// Every process knows every keyed group, also one that runs
			// none of its instances, and hears its rescales.
			j.keyed(p.Tasks[p.TaskOf[e.To]].Parallelism)
		}
	}
	j.dropAbsentRouting(pl)
	w := newWiring(j, p, rt, pl, net)
	j.noteTasks(p, w.heads, pl, rt)
	j.markAbsent()
	j.bootLeaves()
	w.keyedChains()
	w.nameMeters()
	w.makeInboxes()
	w.lives = w.mayLive()
	if err := w.connect(); err != nil {
		return err
	}
	if err := w.chooseLives(w.lives); err != nil {
		return err
	}
	w.remoteLives()
	w.holdLives()
	for ti, t := range p.Tasks {
		for inst := 0; inst < t.Parallelism; inst++ {
			if !pl.local(inst, t.Parallelism) {
				continue
			}
			if err := w.start(ti, t, inst); err != nil {
				for _, st := range w.opened {
					st.Close() // readers opened so far
				}
				return err
			}
		}
	}
	return j.handovers.closeIfIdle()
}

// wiring is what instantiate works from: the plan, where instances run,
// and the inboxes, slots and wires made so far.
type wiring struct {
	j   *Job
	p   *plan.Physical
	rt  *runtime.Runtime
	pl  placement
	net transport.Network
	par map[int]int // node -> parallelism
	// inboxes of the local instances of task heads that are not sources
	inboxes   map[int][]*runtime.Inbox
	slots     map[slotKey]runtime.Outlet
	wires     map[int]dataflow.Wire
	outEdges  map[[2]int][]int // (node, port) -> edge indices
	hasRemote map[int]bool     // task index -> has a non-fused out edge
	inEdge    map[int]plan.Edge
	opened    []runtime.SourceTask           // readers opened, closed again if a later one fails
	keys      map[[2]int]*metrics.KeyCounter // (edge, sender) -> its count per key group
	heads     []string                       // task -> its name in the runtime (taskNames)
	chains    []string                       // task -> its chain's name (taskNames)
	// lives marks the tasks whose instances start and end with their key
	// groups (lives.go); first is the epoch the instance being made
	// starts at, and mu is held while a later life is made.
	lives map[int]bool
	made  map[int]madeTask // first instances made to choose lives
	first uint64
	mu    sync.Mutex
	// posts carries the micro-batch rounds' posts (nil in one process or
	// without micro-batch strategies).
	posts *roundPosts
}

// slotKey is a receiver's slot for one sender over one edge.
type slotKey struct{ edge, recv, send int }

func newWiring(j *Job, p *plan.Physical, rt *runtime.Runtime, pl placement, net transport.Network) *wiring {
	w := &wiring{j: j, p: p, rt: rt, pl: pl, net: net, par: map[int]int{}, inboxes: map[int][]*runtime.Inbox{},
		slots: map[slotKey]runtime.Outlet{}, wires: map[int]dataflow.Wire{}, outEdges: map[[2]int][]int{},
		hasRemote: map[int]bool{}, inEdge: map[int]plan.Edge{}, keys: map[[2]int]*metrics.KeyCounter{}}
	for _, pn := range p.Nodes {
		w.par[pn.ID] = pn.Parallelism
	}
	if net != nil && j.microBatched() {
		w.posts = newRoundPosts(rt, net)
	}
	w.heads, w.chains = taskNames(p, func(id int) string { return j.Nodes[id].Name })
	for ei, e := range p.Edges {
		w.outEdges[[2]int{e.From, e.FromPort}] = append(w.outEdges[[2]int{e.From, e.FromPort}], ei)
		w.inEdge[e.To] = e // the input edge of a one-input node
		if !e.Fused {
			w.hasRemote[p.TaskOf[e.From]] = true
		}
	}
	return w
}

func (w *wiring) makeInboxes() {
	for _, t := range w.p.Tasks {
		n := w.j.Nodes[t.Head]
		if n.Kind == plan.Source {
			continue
		}
		w.inboxes[n.Id] = make([]*runtime.Inbox, t.Parallelism)
		for i := 0; i < t.Parallelism; i++ {
			if w.pl.local(i, t.Parallelism) {
				w.inboxes[n.Id][i] = w.rt.NewInbox(w.runName(n.Id), i, w.j.Cfg.QueueDepth)
			}
		}
	}
}

// connect registers, for every local receiver, a slot for each of its
// senders, in the senders' order (an ordered task reads them by index); a
// remote sender's slot is fed by a pump from the network.
func (w *wiring) connect() error {
	for ei, e := range w.p.Edges {
		if e.Fused {
			continue
		}
		for r, in := range w.inboxes[e.To] {
			if in == nil {
				continue
			}
			lo, hi := w.senders(e, r)
			for s := lo; s < hi; s++ {
				if w.pl.local(s, w.par[e.From]) {
					var slot runtime.Outlet
					if w.lives[w.p.TaskOf[e.From]] {
						// It may end and start again: taken back when it does.
						slot = in.SenderFrom(e.Port, w.rt.Retirement(w.runName(e.From), s))
					} else {
						slot = in.Sender(e.Port)
					}
					w.slots[slotKey{ei, r, s}] = slot
					continue
				}
				slot := in.SenderFrom(e.Port, w.rt.Retirement(w.runName(e.From), s))
				wire, err := w.edgeWire(ei, e)
				if err != nil {
					return err
				}
				ch, err := exchange.ChannelID(ei, s, r)
				if err != nil {
					return err
				}
				proc := w.pl.proc(s, w.par[e.From])
				from := fmt.Sprintf("%s#%d from process %d", w.j.Nodes[e.To].Name, r, proc)
				pm := w.rt.NewMeter(fmt.Sprintf("%s from process %d", w.chain(e.To), proc), r)
				recv := w.rt.Meter(w.runName(e.To), r).M
				// A pump for each process of the slot in turn (one that
				// left ends with its final marker).
				sender, receiver := w.rt.Retirement(w.runName(e.From), s), w.rt.Retirement(w.runName(e.To), r)
				pump := func(done <-chan struct{}) error {
					return exchange.Pump(wire, w.net.Receiver(ch, proc), slot, from, ch, pm, recv)(done)
				}
				ended := func(err error) error { return endedSender(slot.From(pm), sender, receiver, w.j.joinedAt(), err) }
				if w.lives[w.p.TaskOf[e.From]] || w.lives[w.p.TaskOf[e.To]] {
					w.rt.AddListener(from, livingPump(pump, ended, sender, receiver), nil)
					continue
				}
				w.rt.AddService(from, w.j.slots.serve(proc, func(done <-chan struct{}) error {
					err := pump(done)
					if errors.Is(err, exchange.ErrSilentClose) {
						return ended(err)
					}
					return err
				}))
			}
		}
	}
	return nil
}

// edgeWire returns the wire format of edge ei, made once.
func (w *wiring) edgeWire(ei int, e plan.Edge) (dataflow.Wire, error) {
	if wire, ok := w.wires[ei]; ok {
		return wire, nil
	}
	wire, err := w.j.Nodes[e.To].Inputs[e.Port].Wire()
	if err != nil {
		return nil, fmt.Errorf("weir: %s cannot cross processes: %w", w.j.Nodes[e.To].Name, err)
	}
	w.wires[ei] = wire
	return wire, nil
}

// senders returns the sender instances [lo, hi) of receiver recv over e.
func (w *wiring) senders(e plan.Edge, recv int) (lo, hi int) {
	if e.Exchange == plan.Forward {
		return recv, recv + 1
	}
	return 0, w.par[e.From]
}

// receivers returns the receiver instances sender inst sends to over e.
func (w *wiring) receivers(e plan.Edge, inst int) []int {
	switch e.Exchange {
	case plan.Forward:
		return []int{inst}
	case plan.Gather:
		return []int{0}
	}
	recvs := make([]int, w.par[e.To])
	for r := range recvs {
		recvs[r] = r
	}
	return recvs
}

// outlet is the way from sender instance s to receiver r over edge ei.
func (w *wiring) outlet(ei, s, r int) (runtime.Outlet, error) {
	e := w.p.Edges[ei]
	m := w.senderMeter(e.From, s)
	if o, ok := w.slots[slotKey{ei, r, s}]; ok {
		return w.withKeys(o.From(m).Since(w.first), ei, s), nil
	}
	wire, err := w.edgeWire(ei, e)
	if err != nil {
		return runtime.Outlet{}, err
	}
	ch, err := exchange.ChannelID(ei, s, r)
	if err != nil {
		return runtime.Outlet{}, err
	}
	to := w.pl.proc(r, w.par[e.To])
	slots, net, done := w.j.slots, w.net, w.rt.Done()
	o := runtime.RemoteOutlet(&exchange.RemoteOutlet{W: wire, S: w.net.Sender(ch, to), Name: w.j.Nodes[e.To].Name,
		Bytes: &w.j.wireBytes, M: m, Ch: ch, Renew: func() (transport.Sender, error) {
			// The receiver's slot was taken again: the network's channel
			// to its new process, once it reaches it.
			select {
			case <-slots.current(to):
			case <-done:
				return nil, errors.New("weir: stopped")
			}
			return net.Sender(ch, to), nil
		}}).Until(w.rt.Retirement(w.runName(e.To), r))
	return w.withKeys(o.From(m), ei, s), nil
}

// outputs makes the consumers of node id's output ports for one
// instance: the fused operators after it, made with it, and the senders
// of its exchanges.
func (w *wiring) outputs(id int, tc dataflow.TaskCtx) ([]any, error) {
	n := w.j.Nodes[id]
	outs := make([]any, len(n.Ports))
	for port := range n.Ports {
		var cons []any
		for _, ei := range w.outEdges[[2]int{id, port}] {
			c, err := w.consumer(ei, id, tc)
			if err != nil {
				return nil, err
			}
			cons = append(cons, c)
		}
		outs[port] = n.Ports[port](cons)
	}
	return outs, nil
}

// consumer makes what node id's instance pushes into over edge ei.
func (w *wiring) consumer(ei, id int, tc dataflow.TaskCtx) (any, error) {
	e := w.p.Edges[ei]
	if e.Fused {
		outs, err := w.outputs(e.To, tc)
		if err != nil {
			return nil, err
		}
		return w.j.Nodes[e.To].NewOp(tc, outs)
	}
	recvs := w.receivers(e, tc.Inst)
	outlets := make([]runtime.Outlet, len(recvs))
	for i, r := range recvs {
		o, err := w.outlet(ei, tc.Inst, r)
		if err != nil {
			return nil, err
		}
		outlets[i] = o
	}
	recv := w.j.Nodes[e.To]
	x := dataflow.ExchangeCtx{
		Ex: e.Exchange, Outlets: outlets, Name: recv.Name,
		Sender: tc.Inst, Senders: w.par[id], Done: w.rt.Done(),
		Ordered: e.Ordered, Whole: e.Whole, Units: tc.Units, Dist: w.j.StableHash(), From: tc.From, Routing: w.j.Schedule(len(outlets)).At(w.first), Schedule: w.j.Schedule(len(outlets)),
	}
	if w.posts != nil {
		par := w.par[e.To]
		x.Posts, x.Self, x.ProcOf = w.posts, w.pl.self, func(inst int) int { return w.pl.proc(inst, par) }
	}
	return recv.Inputs[e.Port].Exchange(x), nil
}

// taskCtx is what instance inst of task t is made with, and the list its
// operators' saved state goes into.
func (w *wiring) taskCtx(t plan.Task, inst int) (dataflow.TaskCtx, *[]dataflow.SnapEntry) {
	n := w.j.Nodes[t.Head]
	tc := dataflow.TaskCtx{Inst: inst, Par: t.Parallelism, Done: w.rt.Done()}
	if w.posts != nil {
		par := t.Parallelism
		tc.Posts, tc.Self, tc.ProcOf = w.posts, w.pl.self, func(inst int) int { return w.pl.proc(inst, par) }
	}
	snaps := new([]dataflow.SnapEntry)
	tc.Snaps = snaps // for checkpoints and key-group handovers
	tc.View = routing.NewView(w.j.Schedule(t.Parallelism).At(w.first))
	if c := w.j.coord; c != nil {
		tc.Checkpoints, tc.From = true, c.from
		name := w.runName(t.Head)
		tc.Commits = func(out dataflow.TwoPhase, op string, inst int) (any, error) {
			w.j.twoPhase(name)
			return c.recoverCommitter(out, op, inst)
		}
	}
	if w.p.Ordered[n.Id] {
		tc.Units = &dataflow.UnitCtx{}
		if e, ok := w.inEdge[n.Id]; ok && e.Ordered && len(n.Inputs) == 1 {
			tc.Recv = &dataflow.OrdRecv{First: 0, Step: 1, Senders: w.par[e.From], Whole: e.Whole, KeepSeq: !w.p.Whole[n.Id]}
			if e.Exchange == plan.Rebalance {
				tc.Recv.First, tc.Recv.Step = int64(inst), int64(t.Parallelism)
			}
		}
	}
	return tc, snaps
}

// start makes instance inst of task t (the ti-th) and adds it to the
// runtime, as a source or as a task reading its inbox.
func (w *wiring) start(ti int, t plan.Task, inst int) error {
	j, n := w.j, w.j.Nodes[t.Head]
	terminal := !w.hasRemote[ti]
	if n.Kind != plan.Source {
		var made *madeTask
		if m, ok := w.made[ti]; ok && inst == m.inst {
			made = &m
		}
		if w.lives[ti] {
			return w.startLives(ti, t, inst, made)
		}
		if made == nil {
			it, _, err := w.newTask(t, inst, birth{restore: true, id: w.reporterID()})
			if err != nil {
				return err
			}
			made = &madeTask{it: it}
		}
		it := made.it
		w.rt.AddTask(w.runName(n.Id), inst, w.inboxes[n.Id][inst], it, terminal)
		return nil
	}
	w.first = 0
	tc, snaps := w.taskCtx(t, inst)
	outs, err := w.outputs(n.Id, tc)
	if err != nil {
		return err
	}
	if src := j.splits.sources[n.Name]; src != nil {
		return w.startShares(src, ti, t, inst, tc, outs, *snaps)
	}
	st, err := n.NewSource(tc, outs)
	if err != nil {
		return fmt.Errorf("%s#%d: %w", n.Name, inst, err)
	}
	w.opened = append(w.opened, st)
	if j.coord != nil {
		if err := j.checkpointSource(st, n.Name, inst, t.Parallelism, *snaps); err != nil {
			return fmt.Errorf("%s#%d: %w", n.Name, inst, err)
		}
	}
	w.rt.AddSource(w.runName(n.Id), inst, st, terminal)
	return nil
}

// birth is how newTask makes an instance: from epoch first (0 for one
// that starts with the job), with reporter id, restoring the checkpoint
// the job resumed from if restore (a later life of an instance that
// lives by its key groups, lives.go, restores nothing).
type birth struct {
	first   uint64
	id      coord.TaskID
	restore bool
}

// madeTask is an instance made before it is added to the runtime, with
// its reporter id.
type madeTask struct {
	it   runtime.InputTask
	id   coord.TaskID
	inst int
	// handover says whether it was made with a key-group handover (it
	// has keyed state), which counts it live (handovers.ended).
	handover bool
}

// newTask makes instance inst of input task t: its operators, with the
// key-group handover, the ownership checks and the checkpoint reporter
// hooked to its markers. It returns the operators' state too.
func (w *wiring) newTask(t plan.Task, inst int, b birth) (runtime.InputTask, []dataflow.SnapEntry, error) {
	j, n := w.j, w.j.Nodes[t.Head]
	first := b.first
	w.first = first
	tc, snaps := w.taskCtx(t, inst)
	outs, err := w.outputs(n.Id, tc)
	if err != nil {
		return nil, nil, err
	}
	it, err := n.NewTask(tc, outs)
	if err != nil {
		return nil, nil, fmt.Errorf("%s#%d: %w", n.Name, inst, err)
	}
	w.unmovable(t, *snaps)
	if x := w.handover(n.Name, t.Parallelism, inst, *snaps, tc.View, first); x != nil {
		it = hookMarks(it, x.after)
		if j.coord != nil {
			*snaps = append(*snaps, dataflow.SnapEntry{Op: n.Name + routingSuffix, S: routingSnap{x}})
		}
	} else {
		// No keyed state to move, but maybe ownership checks to keep in
		// step with the table each epoch is routed by.
		s, v := j.Schedule(t.Parallelism), tc.View
		it = hookMarks(it, func(m progress.Marker) error {
			if !m.Final {
				v.Set(s.Enter(uint64(m.Epoch) + 1))
			}
			return nil
		})
	}
	if j.coord != nil {
		r := &reporter{c: j.coord, last: j.coord.lastReported(), inst: inst, snaps: *snaps, gone: w.rt.Retirement(w.runName(n.Id), inst)}
		r.id = b.id
		if b.restore {
			if err := r.restore(t.Parallelism, j.Schedule(t.Parallelism).At(first)); err != nil {
				return nil, nil, err
			}
		} else {
			// A later life reports from its first epoch's checkpoint on.
			r.last = max(r.last, lastBefore(j.coord.every, first))
		}
		it = hookMarks(it, r.after)
	}
	return it, *snaps, nil
}

// checkpointSource makes a source task take part in checkpoints: it
// resumes at its saved position and saves it at each checkpoint, with the
// state of the operators fused into it.
func (j *Job) checkpointSource(st runtime.SourceTask, name string, inst, par int, snaps []dataflow.SnapEntry) error {
	type seekable interface {
		Position() ([]byte, error)
		Seek([]byte) error
		SeekSplits([][]byte) error
		SetAfter(func(progress.Marker) error)
		Count() int64
		Acker() func([]byte) error
	}
	s, ok := st.(seekable)
	if !ok {
		return fmt.Errorf("weir: source %s cannot be checkpointed", name)
	}
	op := sourceOp(name)
	pos := func() (int, []byte, error) {
		b, err := s.Position()
		return inst, b, err
	}
	r := &reporter{c: j.coord, last: j.coord.lastReported(), inst: inst, snaps: snaps, source: &sourcePos{op: op, pos: pos, count: s.Count, acker: s.Acker}}
	if err := r.restore(par, j.Routing(par)); err != nil {
		return err
	}
	switch old := j.coord.instances[op]; {
	case old > 0 && old != par:
		if err := s.SeekSplits(j.coord.allInstances(op)); err != nil {
			return fmt.Errorf("resuming at checkpoint %d, taken with %d instances: %w", j.coord.from, old, err)
		}
	case old > 0:
		pos, _ := j.coord.restoredInstance(op, inst)
		if err := s.Seek(pos); err != nil {
			return fmt.Errorf("resuming at checkpoint %d: %w", j.coord.from, err)
		}
	default:
		if _, err := s.Position(); err != nil {
			return err // not seekable: say so before the job runs
		}
	}
	r.id = j.coord.join()
	s.SetAfter(r.after)
	return nil
}
