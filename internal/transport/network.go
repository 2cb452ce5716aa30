package transport

// Network is one process's end of the mesh: the sending and receiving ends
// of every channel to and from every process, itself included.
type Network interface {
	// Sender returns the sending end of channel ch towards process to,
	// creating it on first use; later calls return the same Sender. One
	// goroutine uses it. It panics if to is not a process index.
	Sender(ch uint32, to int) Sender
	// Receiver returns the receiving end of channel ch from process from,
	// creating it on first use; later calls return the same Receiver. One
	// goroutine uses it. It panics if from is not a process index.
	Receiver(ch uint32, from int) Receiver
	// Processes returns the number of processes in the mesh.
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
