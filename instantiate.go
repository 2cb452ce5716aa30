package weir

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
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
	par := map[int]int{}
	for _, pn := range p.Nodes {
		par[pn.ID] = pn.Parallelism
	}
	// Inboxes of the local instances of task heads that are not sources.
	inboxes := map[int][]*runtime.Inbox{}
	for _, t := range p.Tasks {
		n := j.nodes[t.Head]
		if n.kind == plan.Source {
			continue
		}
		inboxes[n.id] = make([]*runtime.Inbox, t.Parallelism)
		for i := 0; i < t.Parallelism; i++ {
			if pl.local(i, t.Parallelism) {
				inboxes[n.id][i] = rt.NewInbox(n.name, i, j.cfg.queueDepth)
			}
		}
	}
	// Every local receiver registers a slot for each of its senders, in
	// the senders' order (an ordered task reads them by index); a remote
	// sender's slot is fed by a pump from the network.
	type slotKey struct{ edge, recv, send int }
	slots := map[slotKey]runtime.Outlet{}
	wires := map[int]wire{}
	edgeWire := func(ei int, e plan.Edge) (wire, error) {
		if w, ok := wires[ei]; ok {
			return w, nil
		}
		w, err := j.nodes[e.To].inputs[e.Port].wire()
		if err != nil {
			return nil, fmt.Errorf("weir: %s cannot cross processes: %w", j.nodes[e.To].name, err)
		}
		wires[ei] = w
		return w, nil
	}
	senders := func(e plan.Edge, recv int) (lo, hi int) {
		if e.Exchange == plan.Forward {
			return recv, recv + 1
		}
		return 0, par[e.From]
	}
	outEdges := map[[2]int][]int{} // (node, port) -> edge indices
	hasRemote := map[int]bool{}    // task index -> has a non-fused out edge
	for ei, e := range p.Edges {
		outEdges[[2]int{e.From, e.FromPort}] = append(outEdges[[2]int{e.From, e.FromPort}], ei)
		if e.Fused {
			continue
		}
		hasRemote[p.TaskOf[e.From]] = true
		for r, in := range inboxes[e.To] {
			if in == nil {
				continue
			}
			lo, hi := senders(e, r)
			for s := lo; s < hi; s++ {
				slot := in.Sender(e.Port)
				if pl.local(s, par[e.From]) {
					slots[slotKey{ei, r, s}] = slot
					continue
				}
				w, err := edgeWire(ei, e)
				if err != nil {
					return err
				}
				ch, err := channelID(ei, s, r)
				if err != nil {
					return err
				}
				from := fmt.Sprintf("%s#%d from process %d", j.nodes[e.To].name, r, pl.proc(s, par[e.From]))
				rt.AddService(from, pump(w, net.Receiver(ch, pl.proc(s, par[e.From])), slot, from))
			}
		}
	}
	// outlet is the way from sender instance s to receiver r over edge ei.
	outlet := func(ei, s, r int) (runtime.Outlet, error) {
		e := p.Edges[ei]
		if o, ok := slots[slotKey{ei, r, s}]; ok {
			return o, nil
		}
		w, err := edgeWire(ei, e)
		if err != nil {
			return runtime.Outlet{}, err
		}
		ch, err := channelID(ei, s, r)
		if err != nil {
			return runtime.Outlet{}, err
		}
		to := pl.proc(r, par[e.To])
		return runtime.RemoteOutlet(&remoteOutlet{w: w, s: net.Sender(ch, to), name: j.nodes[e.To].name, bytes: &j.wireBytes}), nil
	}
	var build func(id int, tc taskCtx) (any, error)
	outputs := func(id int, tc taskCtx) ([]any, error) {
		inst := tc.inst
		n := j.nodes[id]
		outs := make([]any, len(n.ports))
		for port := range n.ports {
			var cons []any
			for _, ei := range outEdges[[2]int{id, port}] {
				e := p.Edges[ei]
				if e.Fused {
					c, err := build(e.To, tc)
					if err != nil {
						return nil, err
					}
					cons = append(cons, c)
					continue
				}
				var recvs []int
				switch e.Exchange {
				case plan.Forward:
					recvs = []int{inst}
				case plan.Gather:
					recvs = []int{0}
				default:
					for r := 0; r < par[e.To]; r++ {
						recvs = append(recvs, r)
					}
				}
				outlets := make([]runtime.Outlet, len(recvs))
				for i, r := range recvs {
					o, err := outlet(ei, inst, r)
					if err != nil {
						return nil, err
					}
					outlets[i] = o
				}
				recv := j.nodes[e.To]
				cons = append(cons, recv.inputs[e.Port].exchange(exchangeCtx{
					ex: e.Exchange, outlets: outlets, name: recv.name,
					sender: inst, senders: par[id], done: rt.Done(),
					ordered: e.Ordered, whole: e.Whole, units: tc.units, dist: j.stableHash(), from: tc.from,
				}))
			}
			outs[port] = n.ports[port](cons)
		}
		return outs, nil
	}
	build = func(id int, tc taskCtx) (any, error) {
		outs, err := outputs(id, tc)
		if err != nil {
			return nil, err
		}
		return j.nodes[id].newOp(tc, outs)
	}
	inEdge := map[int]plan.Edge{} // the input edge of a one-input node
	for _, e := range p.Edges {
		inEdge[e.To] = e
	}
	// Readers opened so far, closed again if a later one fails to open.
	var opened []runtime.SourceTask
	fail := func(err error) error {
		for _, st := range opened {
			st.Close()
		}
		return err
	}
	for ti, t := range p.Tasks {
		n := j.nodes[t.Head]
		terminal := !hasRemote[ti]
		for inst := 0; inst < t.Parallelism; inst++ {
			if !pl.local(inst, t.Parallelism) {
				continue
			}
			tc := taskCtx{inst: inst, par: t.Parallelism}
			var snaps []snapEntry
			if c := j.coord; c != nil {
				tc.snaps, tc.from = &snaps, c.from
				tc.commits = func(out TwoPhase, op string, inst int) (any, error) { return c.recoverCommitter(out, op, inst) }
			}
			if p.Ordered[n.id] {
				tc.units = &unitCtx{}
				if e, ok := inEdge[n.id]; ok && e.Ordered && len(n.inputs) == 1 {
					tc.recv = &ordRecv{first: 0, step: 1, senders: par[e.From], whole: e.Whole, keepSeq: !p.Whole[n.id]}
					if e.Exchange == plan.Rebalance {
						tc.recv.first, tc.recv.step = int64(inst), int64(t.Parallelism)
					}
				}
			}
			outs, err := outputs(n.id, tc)
			if err != nil {
				return fail(err)
			}
			if n.kind == plan.Source {
				st, err := n.newSource(tc, outs)
				if err != nil {
					return fail(fmt.Errorf("%s#%d: %w", n.name, inst, err))
				}
				opened = append(opened, st)
				if j.coord != nil {
					if err := j.checkpointSource(st, n.name, inst, t.Parallelism, snaps); err != nil {
						return fail(fmt.Errorf("%s#%d: %w", n.name, inst, err))
					}
				}
				rt.AddSource(n.name, inst, st, terminal)
				continue
			}
			it, err := n.newTask(tc, outs)
			if err != nil {
				return fail(fmt.Errorf("%s#%d: %w", n.name, inst, err))
			}
			if j.coord != nil {
				r := &reporter{c: j.coord, last: j.coord.from, inst: inst, snaps: snaps}
				if err := r.restore(t.Parallelism); err != nil {
					return fail(err)
				}
				j.coord.live[r] = true
				it = hookMarks(it, r.after)
			}
			rt.AddTask(n.name, inst, inboxes[n.id][inst], it, terminal)
		}
	}
	return nil
}

// checkpointSource makes a source task take part in checkpoints: it
// resumes at its saved position and saves it at each checkpoint, with the
// state of the operators fused into it.
func (j *Job) checkpointSource(st runtime.SourceTask, name string, inst, par int, snaps []snapEntry) error {
	type seekable interface {
		position() ([]byte, error)
		seek([]byte) error
		seekSplits([][]byte) error
		setAfter(func(progress.Marker) error)
		count() int64
	}
	s, ok := st.(seekable)
	if !ok {
		return fmt.Errorf("weir: source %s cannot be checkpointed", name)
	}
	op := "source:" + name
	r := &reporter{c: j.coord, last: j.coord.from, inst: inst, snaps: snaps, source: &sourcePos{op: op, pos: s.position, count: s.count}}
	if err := r.restore(par); err != nil {
		return err
	}
	switch old := j.coord.instances[op]; {
	case old > 0 && old != par:
		if err := s.seekSplits(j.coord.allInstances(op)); err != nil {
			return fmt.Errorf("resuming at checkpoint %d, taken with %d instances: %w", j.coord.from, old, err)
		}
	case old > 0:
		pos, _ := j.coord.restoredInstance(op, inst)
		if err := s.seek(pos); err != nil {
			return fmt.Errorf("resuming at checkpoint %d: %w", j.coord.from, err)
		}
	default:
		if _, err := s.position(); err != nil {
			return err // not seekable: say so before the job runs
		}
	}
	j.coord.live[r] = true
	s.setAfter(r.after)
	return nil
}
