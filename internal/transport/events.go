package transport

import "sync"

// events queues an elastic network's events without bound (joins and
// leaves are few) and hands them to its reader through out.
type events struct {
	out  chan Event
	wake chan struct{} // capacity 1

	mu sync.Mutex
	q  []Event
}

func newEvents() *events {
	return &events{out: make(chan Event), wake: make(chan struct{}, 1)}
}

// push queues e.
func (ev *events) push(e Event) {
	ev.mu.Lock()
	ev.q = append(ev.q, e)
	ev.mu.Unlock()
	notify(ev.wake)
}

// run hands the queued events out until done is closed, then closes out.
func (ev *events) run(done <-chan struct{}) {
	defer close(ev.out)
	for {
		ev.mu.Lock()
		q := ev.q
		ev.q = nil
		ev.mu.Unlock()
		for _, e := range q {
			select {
			case ev.out <- e:
			case <-done:
				return
			}
		}
		select {
		case <-ev.wake:
		case <-done:
			return
		}
	}
}
