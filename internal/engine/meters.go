package engine

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/transport"
)

// chain returns the name of the task whose head is node head: its
// operators' names joined by "→", made unique (taskNames).
func (w *wiring) chain(head int) string { return w.chains[w.p.TaskOf[head]] }

// runName returns the name the runtime knows the task of node id by: its
// head operator's name, made unique (taskNames).
func (w *wiring) runName(id int) string { return w.heads[w.p.TaskOf[id]] }

// taskNames names every task of p twice: by its head operator, for the
// runtime (errors name it), and by its chain of operators joined by "→",
// for its figures and traces. Operator names need not be unique, but a
// task's figures are found by name, so the second and later tasks of a
// name get " (2)", " (3)"... appended.
func taskNames(p *plan.Physical, name func(id int) string) (heads, chains []string) {
	unique := func(seen map[string]int, n string) string {
		seen[n]++
		if k := seen[n]; k > 1 {
			return fmt.Sprintf("%s (%d)", n, k)
		}
		return n
	}
	hs, cs := map[string]int{}, map[string]int{}
	for _, t := range p.Tasks {
		names := make([]string, len(t.Nodes))
		for i, id := range t.Nodes {
			names[i] = name(id)
		}
		heads = append(heads, unique(hs, name(t.Head)))
		chains = append(chains, unique(cs, strings.Join(names, "→")))
	}
	return heads, chains
}

// nameMeters names the meter of every local task instance after its
// chain.
func (w *wiring) nameMeters() {
	for _, t := range w.p.Tasks {
		for inst := 0; inst < t.Parallelism; inst++ {
			if w.pl.local(inst, t.Parallelism) {
				w.rt.Meter(w.runName(t.Head), inst).SetName(w.chain(t.Head))
			}
		}
	}
}

// senderMeter returns the meter of instance inst of the task node id
// belongs to.
func (w *wiring) senderMeter(id, inst int) *runtime.Meter {
	return w.rt.Meter(w.runName(id), inst)
}

// withKeys gives an outlet of a keyed edge ei the count per key group of
// its sender s, one per (edge, sender), adding into the receiving
// chain's load.
func (w *wiring) withKeys(o runtime.Outlet, ei, s int) runtime.Outlet {
	e := w.p.Edges[ei]
	if e.Exchange != plan.KeyGroup {
		return o
	}
	k := [2]int{ei, s}
	c := w.keys[k]
	if c == nil {
		c = w.j.reg.Load(w.chain(e.To), w.j.Cfg.KeyGroups).Counter()
		w.keys[k] = c
	}
	return o.WithKeys(c)
}

// registry returns the figures of the job's current (or last) run.
func (j *Job) registry() *metrics.Registry {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.reg
}

// peerStats returns what reads the traffic with each peer of net, or nil
// if net does not count it.
func peerStats(net transport.Network) func() []metrics.PeerStats {
	pc, ok := net.(interface{ Peers() []transport.PeerCounts })
	if !ok {
		return nil
	}
	return func() []metrics.PeerStats {
		cs := pc.Peers()
		out := make([]metrics.PeerStats, len(cs))
		for i, c := range cs {
			out[i] = metrics.PeerStats{Peer: c.Peer, BytesOut: c.BytesOut, FramesOut: c.FramesOut,
				BytesIn: c.BytesIn, FramesIn: c.FramesIn, CreditWait: c.CreditWait}
		}
		return out
	}
}

// keyedChains records the parallelism of every chain a keyed exchange
// feeds, which Stats needs to give each instance its key groups' loads.
func (w *wiring) keyedChains() {
	par := map[string]int{}
	for _, e := range w.p.Edges {
		if e.Exchange == plan.KeyGroup {
			par[w.chain(e.To)] = w.par[e.To]
		}
	}
	w.j.mu.Lock()
	w.j.keyedPar = par
	w.j.mu.Unlock()
}
