package engine

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/routing"
)

// presence is which slots of an elastic job have a process, and from
// which epoch: the processes that start the job take part from epoch 0,
// one that joins from its join epoch; a slot without a process is
// absent. A job that is not elastic has none (every method of a nil
// presence says every slot is present).
type presence struct {
	mu   sync.Mutex
	join []uint64 // per slot: the first epoch it takes part in; absent while notYet
	// Per slot: the processes of it this one knows of (a slot left may
	// be taken again), the Left events the network reported here, and
	// one gate per process of it, closed once its join epoch is known and
	// the network has seen the ones before it leave (so that a channel
	// asked for then reaches it, not its predecessor).
	known []int
	left  []int
	gates [][]chan struct{}
}

// notYet is the join epoch of a slot whose process has not joined.
const notYet = math.MaxUint64

// newPresence returns the presence of slots, of which those for which
// first returns notYet are absent.
func newPresence(slots int, first func(slot int) uint64) *presence {
	p := &presence{join: make([]uint64, slots), known: make([]int, slots), left: make([]int, slots), gates: make([][]chan struct{}, slots)}
	for s := range slots {
		p.join[s] = first(s)
		if p.join[s] != notYet {
			p.known[s] = 1
		}
	}
	return p
}

// present says whether slot s has a process (which may take part only
// from a later epoch).
func (p *presence) present(s int) bool { return p.from(s) != notYet }

// from is the first epoch slot s takes part in: 0, its join epoch, or
// notYet.
func (p *presence) from(s int) uint64 {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.join[s]
}

// joined returns a channel closed once slot s has a process.
func (p *presence) joined(s int) <-chan struct{} { return p.gate(s, 0) }

// gate returns a channel closed once the k-th process of slot s (from 0,
// as this process counts them) has joined and the network reaches it.
func (p *presence) gate(s, k int) <-chan struct{} {
	if p == nil {
		return closed
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.gates[s]) <= k {
		p.gates[s] = append(p.gates[s], make(chan struct{}))
	}
	p.open(s)
	return p.gates[s][k]
}

// current returns the gate of the newest process of slot s known here.
func (p *presence) current(s int) <-chan struct{} {
	if p == nil {
		return closed
	}
	p.mu.Lock()
	k := max(p.known[s]-1, 0)
	p.mu.Unlock()
	return p.gate(s, k)
}

// open closes the gates of slot s that may open. It holds p.mu.
func (p *presence) open(s int) {
	for k, g := range p.gates[s] {
		if k < p.known[s] && k <= p.left[s] {
			select {
			case <-g:
			default:
				close(g)
			}
		}
	}
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// set records that slot s takes part from epoch e; it reports whether
// this is news (false if s was present already).
func (p *presence) set(s int, e uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.join[s] != notYet {
		return false
	}
	p.join[s] = e
	p.known[s]++
	p.open(s)
	return true
}

// rejoin records that a new process takes slot s, which was left, from
// epoch e; it reports whether this is news.
func (p *presence) rejoin(s int, e uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.join[s] >= e {
		return false
	}
	p.join[s] = e
	p.known[s]++
	p.open(s)
	return true
}

// leftNet records that the network reported the process of slot s
// gone (it left in order).
func (p *presence) leftNet(s int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.left[s]++
	p.open(s)
}

// serve runs a service for each process of slot s in turn: run for the
// first once it joined, then, once run returns (that process is done),
// for the next to take the slot, until the run ends.
func (p *presence) serve(s int, run func(done <-chan struct{}) error) func(done <-chan struct{}) error {
	if p == nil {
		return run
	}
	return func(done <-chan struct{}) error {
		for k := 0; ; k++ {
			select {
			case <-p.gate(s, k):
			case <-done:
				return nil
			}
			if err := run(done); err != nil {
				return err
			}
		}
	}
}

// absent returns the slots without a process.
func (p *presence) absent() []int {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int
	for s, e := range p.join {
		if e == notYet {
			out = append(out, s)
		}
	}
	return out
}

// elasticSources refuses, in an elastic job, a source whose shares
// cannot move but that has instances in slots without a process: what
// they would read would be read by none.
func (j *Job) elasticSources(p *plan.Physical, pl placement, sp *splits) error {
	absent := j.slots.absent()
	for _, t := range p.Tasks {
		n := j.Nodes[t.Head]
		why, kept := sp.kept[n.Name]
		if n.Kind != plan.Source || !kept {
			continue
		}
		for inst := range t.Parallelism {
			if q := pl.proc(inst, t.Parallelism); slices.Contains(absent, q) {
				return fmt.Errorf("weir: source %s has instance %d in process %d, which has not joined the elastic job, and its shares cannot move to the instances that run: %s", n.Name, inst, q, why)
			}
		}
	}
	return nil
}

// dropAbsentRouting, on a process that starts an elastic job from a
// checkpoint, drops the restored routing of a keyed group whose tables
// give key groups to instances of slots without a process (they had
// joined before the checkpoint): the group starts as a new job's does,
// on the members' instances, and restores its state by key group.
func (j *Job) dropAbsentRouting(pl placement) {
	if j.slots == nil || j.boot != nil {
		return
	}
	j.rescale.mu.Lock()
	pars := make([]int, 0, len(j.rescale.pars))
	for par := range j.rescale.pars {
		pars = append(pars, par)
	}
	j.rescale.mu.Unlock()
	for _, par := range pars {
		if j.routesToAbsent(j.Schedule(par), pl) {
			j.ResetSchedule(par)
		}
	}
}

// routesToAbsent says whether a schedule's tables give key groups (or
// shares) to instances of slots without a process.
func (j *Job) routesToAbsent(s *routing.Schedule, pl placement) bool {
	if j.slots == nil || j.boot != nil {
		return false
	}
	for _, t := range s.Tables(0) {
		for kg := range t.Groups() {
			if !j.slots.present(pl.proc(t.Owner(partition.KeyGroup(kg)), t.Instances())) {
				return true
			}
		}
	}
	return false
}
