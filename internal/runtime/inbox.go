package runtime

import "github.com/weirstream/weir/internal/progress"

// Inbox is the input of one task instance: one bounded channel per sender,
// so that the task can stop reading from a sender that has already ended
// the current epoch while it waits for the others. That sender then blocks
// once its channel is full: alignment holds nothing back in memory, and a
// fast input is slowed down to the pace of the slowest (backpressure), as
// Flink's aligned barriers do.
type Inbox struct {
	rt    *Runtime
	name  string
	depth int
	chans []chan Message
	ports []int         // sender index -> input port
	ready chan struct{} // a sender sent something; capacity 1
}

// Sender registers a new sender on input port port and returns its end of
// the inbox. All senders must be registered before Run.
func (in *Inbox) Sender(port int) Outlet {
	in.ports = append(in.ports, port)
	in.chans = append(in.chans, make(chan Message, in.depth))
	s := len(in.ports) - 1
	return Outlet{in: in, ch: in.chans[s]}
}

// Outlet is one sender's end of an inbox, or of a receiver in another
// process. It is used by one goroutine.
type Outlet struct {
	in     *Inbox
	ch     chan Message
	remote Remote
}

// Remote carries what an outlet sends to an inbox in another process: the
// remote outlet of internal/exchange encodes it and the transport carries it. Send owns the
// batch from then on.
type Remote interface {
	Send(batch any) error
	Mark(m progress.Marker) error
}

// RemoteOutlet returns an outlet that sends through r.
func RemoteOutlet(r Remote) Outlet { return Outlet{remote: r} }

// Send hands a batch to the receiver, blocking while this sender's channel
// is full. It fails only when the runtime is stopping.
func (o Outlet) Send(batch any) error {
	if o.remote != nil {
		return o.remote.Send(batch)
	}
	return o.send(Message{Batch: batch})
}

// Mark ends an epoch on this channel.
func (o Outlet) Mark(m progress.Marker) error {
	if o.remote != nil {
		return o.remote.Mark(m)
	}
	return o.send(Message{Marker: m})
}

func (o Outlet) send(m Message) error {
	select {
	case o.ch <- m:
	case <-o.in.rt.done:
		return errStopped
	}
	select {
	case o.in.ready <- struct{}{}:
	default:
	}
	return nil
}
