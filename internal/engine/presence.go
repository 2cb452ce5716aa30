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
	join []uint64        // per slot: the first epoch it takes part in; absent while notYet
	gate []chan struct{} // per slot: closed once its first epoch is known
}

// notYet is the join epoch of a slot whose process has not joined.
const notYet = math.MaxUint64

// newPresence returns the presence of slots, of which those for which
// first returns notYet are absent.
func newPresence(slots int, first func(slot int) uint64) *presence {
	p := &presence{join: make([]uint64, slots), gate: make([]chan struct{}, slots)}
	for s := range slots {
		p.join[s] = first(s)
		p.gate[s] = make(chan struct{})
		if p.join[s] != notYet {
			close(p.gate[s])
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
func (p *presence) joined(s int) <-chan struct{} {
	if p == nil {
		return closed
	}
	return p.gate[s]
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
	close(p.gate[s])
	return true
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

// gated runs a service once gate closes (the peer it serves joined the
// job), or returns at once if the run ends first.
func gated(gate <-chan struct{}, run func(done <-chan struct{}) error) func(done <-chan struct{}) error {
	return func(done <-chan struct{}) error {
		select {
		case <-gate:
		case <-done:
			return nil
		}
		return run(done)
	}
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
