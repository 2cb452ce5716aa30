package engine

import (
	"cmp"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/transport"
)

// One process of an elastic job admits the processes that join: the
// admitter, of the processes present the one present longest (by the
// epoch its slot took part from, then by slot: process 0 until it
// leaves). Every process works it out alike from what it knows. Once the
// admitter leaves, none admits until its final summary has come (before
// it heard of its own leave it may still admit one, whose announcement
// comes before that summary), and then the next one does; a process that
// joined comes after every process present before it, so admitting
// never moves to a process while an older one may still admit. Every
// process notes the processes the mesh reports joined, and the admitter
// lets in those it noted while another admitted (Joined events come
// once). A joiner takes the first answer that comes
// (transport.RecvFirst).

// watchSlots follows the slots of an elastic job as the network reports
// them: a slot whose process left (the gates of the next process to take
// it wait for that), and each process that joins, which the admitter
// lets in: the join is planned and announced, and the joiner is sent its
// bootstrap (or why it cannot join).
func (j *Job) watchSlots(rt *runtime.Runtime, el transport.Elastic) {
	kick := make(chan struct{}, 1)
	j.rescale.mu.Lock()
	j.rescale.admitKick = kick
	j.rescale.mu.Unlock()
	rt.AddService("watch-slots", func(done <-chan struct{}) error {
		// pending holds the slots the mesh reported joined, with the
		// epoch their slot took part from then.
		pending := map[int]uint64{}
		for {
			select {
			case ev, ok := <-el.Events():
				if !ok {
					return nil
				}
				switch ev.Kind {
				case transport.Left:
					j.slots.leftNet(ev.Slot)
					delete(pending, ev.Slot)
				case transport.Joined:
					pending[ev.Slot] = j.slots.from(ev.Slot)
				}
			case <-kick:
			case <-done:
				return nil
			}
			j.admitPending(pending, el, done)
		}
	})
}

// admitPending lets in, if this process admits joins now, the slots
// noted as joined that still wait for it, and forgets those let in
// since (their slot's epoch changed) and the members.
func (j *Job) admitPending(pending map[int]uint64, el transport.Elastic, done <-chan struct{}) {
	admits := j.admits()
	for _, p := range slices.Sorted(maps.Keys(pending)) {
		switch {
		case j.slots.from(p) != pending[p] || !j.takeable(p):
			delete(pending, p)
		case admits:
			delete(pending, p)
			j.admit(p, el, done)
		}
	}
}

// admits says whether this process admits joins now.
func (j *Job) admits() bool {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	return j.admitter() == j.Process()
}

// admitter is the process that admits joins now, or -1 while the one
// before leaves and has not ended yet. One whose final summary came is
// passed over, whether it left or ran to its end (then the next refuses
// the join, the job ending, instead of leaving the joiner without an
// answer). It holds j.rescale.mu.
func (j *Job) admitter() int {
	type cand struct {
		from uint64
		p    int
	}
	var cs []cand
	for q := range j.Processes() {
		if f := j.slots.from(q); f != notYet {
			cs = append(cs, cand{f, q})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.p, b.p)) })
	for _, c := range cs {
		if at, ok := j.rescale.ended[c.p]; ok && at == c.from {
			continue // it has ended (left, or ran to its end: the next refuses)
		}
		if j.rescale.leave.from[c.p] == 0 {
			return c.p
		}
		return -1 // it leaves, and may admit until it knows
	}
	return -1
}

// peerEnded notes that peer p's final summary came (after its
// announcements were put in force), and wakes the admission: the
// admitter may be another process now.
func (j *Job) peerEnded(p int) {
	if j.slots == nil {
		return
	}
	j.rescale.mu.Lock()
	if j.rescale.ended == nil {
		j.rescale.ended = map[int]uint64{}
	}
	j.rescale.ended[p] = j.slots.from(p)
	kick := j.rescale.admitKick
	j.rescale.mu.Unlock()
	if kick != nil {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
}

// takeable says whether a process may join in slot p: it has none, or
// the one it had has left; never slot 0, whose process starts the job
// and cannot join it (one started again while the job runs without it
// fails instead, joinIfRunning).
func (j *Job) takeable(p int) bool {
	if p == 0 {
		return false
	}
	if !j.slots.present(p) {
		return true
	}
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	return j.rescale.leave.from[p] > 0
}

// admit lets process p in, retrying while a reconfiguration is under
// way; a join that cannot be is refused, and p told why.
func (j *Job) admit(p int, el transport.Elastic, done <-chan struct{}) {
	for {
		boot, mg, err := j.planJoin(p)
		if err == nil {
			j.Logger().Info("weir: a process joins the job", "process", p, "epoch", mg.Join, "steps", mg.Steps, "moves", mg.Moves)
			sendBootstrap(el, p, boot)
			return
		}
		if errors.Is(err, errNotAdmitter) {
			return // another process admits joins now
		}
		if !errors.Is(err, errBusy) {
			j.Logger().Warn("weir: a process cannot join the job", "process", p, "reason", err)
			sendRefusal(el, p, err)
			return
		}
		select {
		case <-done:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// errNotAdmitter is what planJoin meets on a process that no longer
// admits joins (it heard of its leave meanwhile).
var errNotAdmitter = errors.New("weir: join: this process does not admit joins now")
