package runtime

import "github.com/weirstream/weir/internal/progress"

// Inbox is the bounded input queue of one task instance.
type Inbox struct {
	ch    chan Message
	rt    *Runtime
	name  string
	ports []int // sender index -> input port
}

// Sender registers a new sender on input port port and returns its end of
// the inbox. All senders must be registered before Run.
func (in *Inbox) Sender(port int) Outlet {
	in.ports = append(in.ports, port)
	return Outlet{in: in, sender: len(in.ports) - 1}
}

// Outlet is one sender's end of an inbox. It is used by one goroutine.
type Outlet struct {
	in     *Inbox
	sender int
}

// Send hands a batch to the receiver, blocking while the inbox is full. It
// fails only when the runtime is stopping.
func (o Outlet) Send(batch any) error {
	select {
	case o.in.ch <- Message{Sender: o.sender, Batch: batch}:
		return nil
	case <-o.in.rt.done:
		return errStopped
	}
}

// Mark ends an epoch on this channel.
func (o Outlet) Mark(m progress.Marker) error {
	select {
	case o.in.ch <- Message{Sender: o.sender, Marker: m}:
		return nil
	case <-o.in.rt.done:
		return errStopped
	}
}
