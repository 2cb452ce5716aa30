package engine

import (
	"fmt"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/exchange"
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
		n := j.Nodes[t.Head]
		if n.Kind == plan.Source {
			continue
		}
		inboxes[n.Id] = make([]*runtime.Inbox, t.Parallelism)
		for i := 0; i < t.Parallelism; i++ {
			if pl.local(i, t.Parallelism) {
				inboxes[n.Id][i] = rt.NewInbox(n.Name, i, j.Cfg.QueueDepth)
			}
		}
	}
	// Every local receiver registers a slot for each of its senders, in
	// the senders' order (an ordered task reads them by index); a remote
	// sender's slot is fed by a pump from the network.
	type slotKey struct{ edge, recv, send int }
	slots := map[slotKey]runtime.Outlet{}
	wires := map[int]dataflow.Wire{}
	edgeWire := func(ei int, e plan.Edge) (dataflow.Wire, error) {
		if w, ok := wires[ei]; ok {
			return w, nil
		}
		w, err := j.Nodes[e.To].Inputs[e.Port].Wire()
		if err != nil {
			return nil, fmt.Errorf("weir: %s cannot cross processes: %w", j.Nodes[e.To].Name, err)
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
				ch, err := exchange.ChannelID(ei, s, r)
				if err != nil {
					return err
				}
				from := fmt.Sprintf("%s#%d from process %d", j.Nodes[e.To].Name, r, pl.proc(s, par[e.From]))
				rt.AddService(from, exchange.Pump(w, net.Receiver(ch, pl.proc(s, par[e.From])), slot, from))
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
		ch, err := exchange.ChannelID(ei, s, r)
		if err != nil {
			return runtime.Outlet{}, err
		}
		to := pl.proc(r, par[e.To])
		return runtime.RemoteOutlet(&exchange.RemoteOutlet{W: w, S: net.Sender(ch, to), Name: j.Nodes[e.To].Name, Bytes: &j.wireBytes}), nil
	}
	var build func(id int, tc dataflow.TaskCtx) (any, error)
	outputs := func(id int, tc dataflow.TaskCtx) ([]any, error) {
		inst := tc.Inst
		n := j.Nodes[id]
		outs := make([]any, len(n.Ports))
		for port := range n.Ports {
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
				recv := j.Nodes[e.To]
				cons = append(cons, recv.Inputs[e.Port].Exchange(dataflow.ExchangeCtx{
					Ex: e.Exchange, Outlets: outlets, Name: recv.Name,
					Sender: inst, Senders: par[id], Done: rt.Done(),
					Ordered: e.Ordered, Whole: e.Whole, Units: tc.Units, Dist: j.StableHash(), From: tc.From, Routing: j.Routing(len(outlets)),
				}))
			}
			outs[port] = n.Ports[port](cons)
		}
		return outs, nil
	}
	build = func(id int, tc dataflow.TaskCtx) (any, error) {
		outs, err := outputs(id, tc)
		if err != nil {
			return nil, err
		}
		return j.Nodes[id].NewOp(tc, outs)
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
		n := j.Nodes[t.Head]
		terminal := !hasRemote[ti]
		for inst := 0; inst < t.Parallelism; inst++ {
			if !pl.local(inst, t.Parallelism) {
				continue
			}
			tc := dataflow.TaskCtx{Inst: inst, Par: t.Parallelism}
			var snaps []dataflow.SnapEntry
			if c := j.coord; c != nil {
				tc.Snaps, tc.From = &snaps, c.from
				tc.Commits = func(out dataflow.TwoPhase, op string, inst int) (any, error) {
					return c.recoverCommitter(out, op, inst)
				}
			}
			if p.Ordered[n.Id] {
				tc.Units = &dataflow.UnitCtx{}
				if e, ok := inEdge[n.Id]; ok && e.Ordered && len(n.Inputs) == 1 {
					tc.Recv = &dataflow.OrdRecv{First: 0, Step: 1, Senders: par[e.From], Whole: e.Whole, KeepSeq: !p.Whole[n.Id]}
					if e.Exchange == plan.Rebalance {
						tc.Recv.First, tc.Recv.Step = int64(inst), int64(t.Parallelism)
					}
				}
			}
			outs, err := outputs(n.Id, tc)
			if err != nil {
				return fail(err)
			}
			if n.Kind == plan.Source {
				st, err := n.NewSource(tc, outs)
				if err != nil {
					return fail(fmt.Errorf("%s#%d: %w", n.Name, inst, err))
				}
				opened = append(opened, st)
				if j.coord != nil {
					if err := j.checkpointSource(st, n.Name, inst, t.Parallelism, snaps); err != nil {
						return fail(fmt.Errorf("%s#%d: %w", n.Name, inst, err))
					}
				}
				rt.AddSource(n.Name, inst, st, terminal)
				continue
			}
			it, err := n.NewTask(tc, outs)
			if err != nil {
				return fail(fmt.Errorf("%s#%d: %w", n.Name, inst, err))
			}
			if j.coord != nil {
				r := &reporter{c: j.coord, last: j.coord.from, inst: inst, snaps: snaps}
				if err := r.restore(t.Parallelism, j.Routing(t.Parallelism)); err != nil {
					return fail(err)
				}
				j.coord.live[r] = true
				it = hookMarks(it, r.after)
			}
			rt.AddTask(n.Name, inst, inboxes[n.Id][inst], it, terminal)
		}
	}
	return nil
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
	}
	s, ok := st.(seekable)
	if !ok {
		return fmt.Errorf("weir: source %s cannot be checkpointed", name)
	}
	op := "source:" + name
	r := &reporter{c: j.coord, last: j.coord.from, inst: inst, snaps: snaps, source: &sourcePos{op: op, pos: s.Position, count: s.Count}}
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
	j.coord.live[r] = true
	s.SetAfter(r.after)
	return nil
}
