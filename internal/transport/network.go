package transport

import "fmt"

// Network is one process's end of the mesh: the sending and receiving ends
// of every channel to and from every process, itself included.
type Network interface {
	// Sender returns the sending end of channel ch towards process to,
	// creating it on first use; later calls return the same Sender. One
	// goroutine uses it. It panics if to is not a process index.
	//
	// In an elastic mesh, to is a slot, and the Sender belongs to the
	// process in the slot: once that process left (Left), it fails with
	// ErrPeerClosed, and later calls return a new Sender, of the next
	// process to take the slot. A Sender towards a slot that no process
	// holds waits in Send until one joins (Joined), then sends to it.
	Sender(ch uint32, to int) Sender
	// Receiver returns the receiving end of channel ch from process from,
	// creating it on first use; later calls return the same Receiver. One
	// goroutine uses it. It panics if from is not a process index.
	//
	// In an elastic mesh, from is a slot, and the Receiver belongs to the
	// process in the slot: once that process left, Recv returns what it
	// sent and then io.EOF, for good, and later calls return a new
	// Receiver, of the next process to take the slot, whose sequence
	// numbers and credits start afresh. A Receiver from a slot that no
	// process holds waits in Recv until one joins and sends.
	Receiver(ch uint32, from int) Receiver
	// Processes returns the number of processes in the mesh (of an
	// elastic mesh: its slots).
	Processes() int
	// Self returns this process's index.
	Self() int
	// Done is closed once the network stopped: it failed (a lost peer, a
	// protocol error) or Close was called.
	Done() <-chan struct{}
	// Err returns nil while the network runs, then why it stopped: the
	// failure, or ErrClosed after an orderly Close.
	Err() error
	// Close shuts the network down in order: it flushes what was sent,
	// tells every peer with a close frame, waits (at most Config.Timeout)
	// for the peers to acknowledge, and closes the connections. Blocked
	// Send and Recv calls return ErrClosed. Close returns the error that
	// failed the network before, if any; calling it again returns the same.
	// In an elastic mesh, Close is how a process leaves: the others keep
	// running and report it Left.
	Close() error
	// Abort stops the network because this process failed: every peer
	// is told why (its network then fails with an error naming this
	// process and the reason) and the connections close. Blocked Send and
	// Recv calls return the reason.
	Abort(reason error)
}

// Sender is the sending end of one channel towards one process.
type Sender interface {
	// Buffer returns a pooled buffer to fill: length 0 and a capacity
	// that follows the sizes of earlier payloads. Appending beyond the
	// capacity is allowed (the buffer then grows as any slice).
	Buffer() []byte
	// Send blocks until the receiver has granted credit for this channel,
	// then queues the payload for the connection. Send takes ownership of
	// payload (it goes back to the pool once written), also when it fails.
	// It fails once the network stopped, the receiving process closed, or
	// payload is longer than MaxPayload.
	Send(payload []byte) error
}

// Receiver is the receiving end of one channel from one process.
type Receiver interface {
	// Recv blocks until the next payload of this channel arrives and
	// returns payloads in the order they were sent. The slice is valid
	// until Release or the next Recv, which releases it implicitly.
	// After the sending process closed in order, Recv returns the
	// payloads still queued and then io.EOF.
	Recv() ([]byte, error)
	// Release returns the last payload's buffer to the pool and grants the
	// sender one credit back (over TCP, credits travel in batches of
	// Credits/4). It does nothing if there is no payload to release.
	Release()
}

// Elastic is the Network of an elastic mesh (Config.Elastic, or
// LocalSlots.Join): its processes hold slots, of which some are present
// at a time, and they join and leave while it runs. A process that
// leaves in order (Close) is no failure: its peers report it Left, their
// Senders to it fail with ErrPeerClosed, their Receivers from it end with
// io.EOF after its last frames. A process lost without a close frame (a
// crash, a reset, a silence of Config.Timeout) fails the network, as in
// a fixed mesh.
type Elastic interface {
	Network
	// Members returns the slots of the processes connected now, this one
	// included, in increasing order.
	Members() []int
	// Events delivers a Joined event for each process this one connected
	// to, from the first (those that Dial connected to included), and a
	// Left event for each that left in order, in the order they
	// happened: the events, read from the start, tell Members. Nothing
	// waits for the reader (events queue up). The channel closes once the
	// network stopped; events not read by then are dropped.
	Events() <-chan Event
}

// Event is a change of an elastic mesh's membership.
type Event struct {
	Kind EventKind
	Slot int
}

func (e Event) String() string { return fmt.Sprintf("%v %d", e.Kind, e.Slot) }

// EventKind says what happened.
type EventKind uint8

const (
	// Joined: a process took the slot and is connected to this one.
	Joined EventKind = 1 + iota
	// Left: the process in the slot left in order; the slot is free.
	Left
)

func (k EventKind) String() string {
	switch k {
	case Joined:
		return "joined"
	case Left:
		return "left"
	}
	return fmt.Sprintf("event(%d)", uint8(k))
}
