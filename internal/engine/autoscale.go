package engine

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/internal/agree"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/ds2"
	"github.com/weirstream/weir/internal/runtime"
)

// ScaleDecision is one decision of the autoscaler: at the end of a policy
// interval (Epoch), the keyed operators' instances went From -> To; Hot
// names key groups no parallelism could serve at the sizing's target;
// Wanted, when the sizing asked for more instances than the processes
// run, is how many (more processes are needed), else 0. InForce is the
// first policy epoch at which the keyed operators ran To instances (0:
// not yet; a rescale put off or refused may never take force).
type ScaleDecision struct {
	Epoch    uint64
	From, To int
	Hot      []string
	Wanted   int
	InForce  uint64
}

// autoscaling is a job's autoscaler and what it decided.
type autoscaling struct {
	mu        sync.Mutex
	decisions []ScaleDecision
	differed  int                         // rounds whose digests differed among the processes
	wanted    int                         // instances the sizing last asked for beyond those of the processes taking part (0: none)
	need      int                         // processes the sizing last needed (0: not sized yet)
	running   int                         // processes taking part in the round it was sized in
	err       error                       // why it stopped deciding, if it did
	board     atomic.Pointer[sizingBoard] // set once Run has built the autoscaler
}

// ScaleDecisions are the autoscaler's decisions so far, oldest first, and
// why it stopped deciding, if it did. Every process of a job lists the
// same ones: those that all the processes taking part computed alike.
func (j *Job) ScaleDecisions() ([]ScaleDecision, error) {
	j.autoscale.mu.Lock()
	defer j.autoscale.mu.Unlock()
	return append([]ScaleDecision(nil), j.autoscale.decisions...), j.autoscale.err
}

// ScaleDisagreements counts the rounds the processes computed from
// figures that differed (by their digests): none of them decided.
func (j *Job) ScaleDisagreements() int {
	j.autoscale.mu.Lock()
	defer j.autoscale.mu.Unlock()
	return j.autoscale.differed
}

// WantedInstances is, when the autoscaler's sizing asks for more
// instances of the keyed operators than the job's processes taking part
// run, how many it asks for: more processes are needed (0 otherwise).
func (j *Job) WantedInstances() int {
	j.autoscale.mu.Lock()
	defer j.autoscale.mu.Unlock()
	return j.autoscale.wanted
}

// ProcessesNeeded is how many processes the autoscaler's last sizing
// needs for the keyed operators' instances, and how many took part in
// it: more are needed when need is above running, fewer would do when
// below (0, 0 before a round is sized).
func (j *Job) ProcessesNeeded() (need, running int) {
	j.autoscale.mu.Lock()
	defer j.autoscale.mu.Unlock()
	return j.autoscale.need, j.autoscale.running
}

// sizingShare is this process's share of the autoscalers' board for its
// summaries (nil in a job that does not size itself).
func (j *Job) sizingShare() []byte {
	if b := j.autoscale.board.Load(); b != nil {
		return b.encode(j.Process())
	}
	return nil
}

// hearSizing records a peer's share.
func (j *Job) hearSizing(p int, share []byte) {
	if b := j.autoscale.board.Load(); b != nil && p != j.Process() {
		if err := b.hear(p, share); err != nil {
			j.Logger().Warn("weir: autoscale: a peer's share left out", "process", p, "reason", err)
		}
	}
}

// autoscaler sizes the keyed operators of a running job at every policy
// epoch (a multiple of the policy interval's epochs), with every other
// process and no master: each freezes its own figures once it has
// completed the epoch and shares them in its summaries; once every
// process taking part has, each steps the same agree.Sizer over the same
// round and shares the round's digest; a decision is carried out, by the
// lowest process taking part, once every digest of its round is equal.
type autoscaler struct {
	j       *Job
	cfg     dataflow.AutoscaleConfig
	every   uint64
	planned int
	sizer   *agree.Sizer
	board   *sizingBoard
	frozen  uint64       // the newest epoch this process froze
	stepped uint64       // the newest round stepped (or passed over)
	sized   uint64       // the newest round given to the sizer
	checks  []roundCheck // rounds whose digests have not all come
	procs   []int        // the processes of the last round stepped
	said    int          // sized rounds since the processes needed were last logged
	names   []string     // the sizing's tasks
	failed  int          // rescales refused in a row
}

// startAutoscale starts a, the job's autoscaler, if it has one; it
// refuses a job with keyed state of its own, which cannot move.
func (j *Job) startAutoscale(rt *runtime.Runtime, a *autoscaler) error {
	if a == nil {
		return nil
	}
	if len(j.rescale.unmovable) > 0 {
		return fmt.Errorf("weir: Autoscale: %s keeps keyed state of its own (declared with KeyedState), which cannot move with its key groups", strings.Join(j.rescale.unmovable, ", "))
	}
	rt.AddService("autoscale", func(done <-chan struct{}) error {
		t := time.NewTicker(j.Cfg.Interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return nil
			case <-t.C:
				select {
				case <-done:
					return nil // a tick left from before the end
				default:
				}
				if err := a.tick(); err != nil {
					j.autoscale.mu.Lock()
					j.autoscale.err = err
					j.autoscale.mu.Unlock()
					j.Logger().Warn("weir: the autoscaler stops deciding", "reason", err)
					return nil
				}
			}
		}
	})
	return nil
}

// newAutoscaler reads the tasks of a job that autoscales (nil for one
// that does not); a job without keyed operators cannot.
func (j *Job) newAutoscaler() (*autoscaler, error) {
	if j.Cfg.Autoscale == nil {
		return nil, nil
	}
	cfg := *j.Cfg.Autoscale
	if err := j.canRescale(); err != nil {
		return nil, fmt.Errorf("weir: Autoscale: %w", err)
	}
	topo, err := j.Topology()
	if err != nil {
		return nil, err
	}
	a := &autoscaler{j: j, cfg: cfg, every: uint64(cfg.Every), board: newSizingBoard(uint64(cfg.Every))}
	// A decision's rescale takes force a lead ahead, and its first
	// step may wait a gap more.
	ac := agree.Config{Policy: cfg.Policy, Patience: j.lead() + 2*uint64(cfg.Every) + cfg.Gap,
		MinInterval: time.Duration(cfg.Every) * j.Cfg.Interval / 2, Processes: j.Processes()}
	for i, t := range topo.Tasks {
		a.names = append(a.names, t.Name)
		ac.Tasks = append(ac.Tasks, ds2.Task{Name: t.Name, Source: t.Kind == "source", Keyed: t.Keyed, Instances: t.Parallelism, Max: t.Parallelism})
		if t.Keyed {
			ac.Keyed = append(ac.Keyed, i)
			a.planned = max(a.planned, t.Parallelism)
		}
		if t.Kind == "source" {
			ac.Sources = append(ac.Sources, t.Name)
		}
	}
	for _, e := range topo.Edges {
		ac.Tasks[e.To].Upstream = append(ac.Tasks[e.To].Upstream, e.From)
	}
	if len(ac.Keyed) == 0 {
		return nil, errors.New("weir: Autoscale: the job has no keyed operator of more than one instance to size")
	}
	active := a.planned
	if j.Cfg.Active > 0 {
		active = min(active, j.Cfg.Active)
	}
	if a.sizer, err = agree.New(ac, active); err != nil {
		return nil, err
	}
	j.autoscale.board.Store(a.board)
	return a, nil
}
