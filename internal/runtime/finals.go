package runtime

import (
	"sync"

	"github.com/weirstream/weir/internal/progress"
)

// A sender's final marker may go to a receiver that takes no part then:
// one of a process that has not joined the job yet, or whose process
// left. The outlet drops it, as any marker for such a receiver, but the
// receiver, once it joins at epoch j (a new process takes its slot),
// waits for the sender from j on; so does one that got the marker and
// whose slot is taken again later. So the runtime holds every final
// marker sent towards a receiver that may join, with its outlet, and
// each time the receiver's join epoch changes to one after the marker,
// it sends it again as the end of that epoch: the receiver takes the
// sender as ended instead of waiting for it. Only outlets to other
// processes and to restartable instances hold (another local receiver's
// join epoch does not change while the runtime runs), and a held marker
// goes again only once its sender's goroutine has closed its meter: the
// outlet, its meter and tracer are the runtime's from then on. A
// restartable sender's held marker is dropped once the sender joins
// again after it, and is not sent to a receiver at whose join the
// sender takes no part: the receiver leaves it out then, and takes it
// back when it joins. The marker goes with no cut time (the
// receiver's first epoch is not measured from the sender's end), and
// the service that sends it is not waited for: a receiver's process
// that never comes holds back no end of the runtime.

// heldFinal is a final marker an outlet sent or dropped; sent is the
// receiver's join epoch it went to last, or never if it was dropped.
type heldFinal struct {
	o    Outlet
	m    progress.Marker
	sent uint64
}

// finals holds the final markers a runtime's outlets sent or dropped
// towards other processes and restartable instances.
type finals struct {
	mu   sync.Mutex
	held []heldFinal
	note chan struct{} // a join was set, or a marker held; capacity 1
}

// hold keeps final marker m, which o sent to its receiver's join epoch
// sent (or dropped: never), for the receiver's later joins.
func (r *Runtime) hold(o Outlet, m progress.Marker, sent uint64) {
	r.finals.mu.Lock()
	r.finals.held = append(r.finals.held, heldFinal{o, m, sent})
	r.finals.mu.Unlock()
	r.noteJoin()
}

// noteJoin wakes the delivery of held final markers, and the instances
// that wait to take part again.
func (r *Runtime) noteJoin() {
	select {
	case r.finals.note <- struct{}{}:
	default:
	}
	r.lives.wakeAll()
}

// due returns the held markers to send again, each as the end of its
// receiver's new join epoch, and records them as sent.
func (r *Runtime) due() []heldFinal {
	r.finals.mu.Lock()
	defer r.finals.mu.Unlock()
	var out []heldFinal
	kept := r.finals.held[:0]
	for i := range r.finals.held {
		h := &r.finals.held[i]
		m := h.o.link.m
		if m != nil && m.life != nil && m.life.Joins() > uint64(h.m.Epoch) {
			continue // its sender started again: its receivers take it back
		}
		kept = append(kept, *h)
		h = &kept[len(kept)-1]
		if m != nil && !m.closed.Load() {
			continue // its sender still runs
		}
		j := h.o.link.gone.Joins()
		if m != nil && m.life != nil && j != never && !m.life.present(j) {
			// A sender that may start again and takes no part at the
			// receiver's join: the receiver leaves it out (Inbox.joins).
			continue
		}
		if j != never && j != h.sent && uint64(h.m.Epoch) < j {
			h.sent = j
			again := *h
			again.m.Epoch, again.m.Cut = progress.Epoch(j), 0
			out = append(out, again)
		}
	}
	clear(r.finals.held[len(kept):])
	r.finals.held = kept
	return out
}

// deliverFinals sends the held final markers as their receivers join,
// until done closes.
func (r *Runtime) deliverFinals(done <-chan struct{}) error {
	for {
		select {
		case <-done:
			return nil
		case <-r.finals.note:
		}
		for _, h := range r.due() {
			if _, err := h.o.mark(h.m); err != nil {
				select {
				case <-done:
					return nil // stopping: the receiver's channel gave up
				default:
					return err
				}
			}
		}
	}
}
