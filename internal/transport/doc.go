// Package transport is the network layer of a master-less job: every
// process runs the same binary and reaches every other process over TCP,
// an all-to-all mesh with exactly one connection per pair of processes.
// Its whole contract is "give me the sending and receiving ends of
// channel N to/from process P": it knows nothing of operators, records
// or time, and carries payloads as opaque bytes.
//
// Dial joins the mesh; NewLocal makes the same Network for processes that
// live in one Go process (tests, single-process runs): payloads are handed
// over as they are, without TCP or framing. Its processes join at a
// barrier, where the settings they join with (JoinWith) are compared as
// Dial's handshake compares them.
//
// A mesh is fixed (every process of Addrs, from start to end) or elastic
// (Config.Elastic; LocalSlots in one Go process): Addrs then lists slots,
// of which the processes present hold some, and processes join (Dial with
// Config.Join) and leave (Close) while the others run. Such a Network is
// an Elastic: it tells who is connected (Members) and who joined and left
// (Events). Parallelism is the engine's business: the transport knows
// slots, not what runs in them.
//
// # Invariants
//
//   - Channels are created on first use by either side. Payloads of one
//     channel from one process to another arrive complete, once, and in
//     the order sent; each data frame carries a sequence number per
//     channel and direction (1, 2, ...) that the receiver checks.
//   - Flow control is by credit, per channel and direction: a receiver
//     grants Config.Credits frames up front (implicitly: both sides know
//     the number) and one more per Release, so at most Credits frames of a
//     channel are queued at the receiver. A consumer that stops reading
//     blocks the senders of its channel only: the reader of a connection
//     never blocks on a channel, and the other channels on the connection
//     keep flowing. Credits return in batches of Credits/4 over TCP.
//   - Each connection is checked in both directions: a heartbeat is sent
//     when nothing else was sent for Config.Heartbeat, and a peer silent
//     for Config.Timeout, a read or write error, or a protocol error
//     (sequence gap, frame beyond credit, malformed frame) fails the whole
//     network: Done is closed and Err names the peer and its address. The
//     failing process tells its other peers why in a close frame before
//     it closes its connections.
//   - Close is orderly: queued frames are flushed, a close frame tells each
//     peer, and the peers answer with theirs; a peer that closed in order
//     is not reported as lost: sends to it fail with ErrPeerClosed and
//     receives from it end with io.EOF once its frames were read.
//   - In an elastic mesh a peer that closed in order has left: the network
//     runs on, reports it Left, and gives the next process in its slot
//     new channels (sequence numbers, credits and queues afresh; Sender
//     and Receiver say what they return across the change). A peer lost
//     otherwise fails the network as in a fixed mesh: elasticity is not
//     fault tolerance. A slot holds one process at a time; each run of a
//     process has a random incarnation that tells it from the slot's
//     earlier and later processes.
//   - An elastic mesh stays complete: every process connects to every
//     process it heard of (elastic.go says how knowledge spreads), so
//     processes that join at once, through different contacts, find each
//     other, and no pair connects twice. A connection whose ok was sent
//     ends in order, even when its process is closing meanwhile.
//   - Payload buffers are pooled (Sender.Buffer, Receiver.Release), and
//     sending and receiving allocate nothing once warm.
//
// # Wire protocol
//
// A process listens at its own address only: on the addresses of this
// machine that the host of Addrs[Self] resolves to (an error names an
// address that is not this machine's), not on every interface. The
// process with the lower index dials the higher one; with Config.TLS the
// connection is mutual TLS 1.3 first, each side's certificate verified
// against the job's CA. Both sides of a new connection send a hello
// (magic "WEIR", protocol version, process index, process count, a random
// nonce), then prove they know the shared secret with
// HMAC-SHA256(secret, own hello || peer hello) without sending it. Only a
// side that checked the peer's proof sends its settings (Config.Settings:
// named values that describe the job), so settings never reach a peer
// that has not proven the secret; then both say ok.
//
// A connection that fails before both proofs checked out (garbage, bad
// magic or version, a wrong secret, a failed TLS handshake, silence for
// Config.Timeout) is not the peer's: it is logged with its address and
// why, and dropped, and Dial keeps accepting, or dials again, until
// DialTimeout. A peer that proved the secret but disagrees (another
// process count, another value of a setting, a setting only one side
// has, a duplicate or out-of-place index) fails Dial on both sides at
// once: *MismatchError names the first setting that differs ("peer 1
// (10.0.0.2:7070) runs another job: --workers is 2 here, 3 there"),
// *RefusedError the rest; the refusing side logs why and sends the
// reason.
//
// In an elastic mesh the hello's version has its high bit set and the
// hello carries the process's incarnation and a contact flag; the process
// count is the slot count. A process that starts with others (Members)
// dials those above it; one that joins (Join) first dials a contact, any
// process of the running job whatever its index, with the contact flag.
// Every process keeps listening while it runs, and a handshake there
// that fails concerns the newcomer only: a joiner with another secret is
// dropped, one with other settings or for a slot whose process runs is
// refused (the joiner's Dial fails with the *MismatchError or
// *RefusedError), and the members run on. A process of an elastic mesh
// and one of a fixed mesh are refused as running another job ("mesh").
//
// Then frames flow both ways: a HeaderSize header (kind, channel, source,
// target, length, sequence) and a payload of at most MaxPayload bytes.
// Elastic connections also carry member frames, a note each (note.go):
// each side first tells the other every process it is connected to, then
// that it is synced (a contact that is itself joining says so only once
// its own view is complete); later, every process that joins or leaves
// it. A fixed mesh's decoder refuses member frames as of an unknown kind.
// Decoder decodes them from bytes fed in chunks of any size. Per peer, a
// writer goroutine batches queued frames into one write (writev for large
// payloads; over TLS, the batch's records gathered into one write), and a
// reader goroutine dispatches frames to channel queues.
//
// # Usage
//
//	nw, err := transport.Dial(ctx, transport.Config{
//		Self:     self,
//		Addrs:    []string{"10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000"},
//		Settings: []transport.Setting{{Name: "plan", Value: planHash}},
//		Secret:   os.Getenv("WEIR_SECRET"),
//	})
//	if err != nil {
//		return err
//	}
//	defer nw.Close()
//
//	// Sending goroutine: channel 7 to process 2.
//	s := nw.Sender(7, 2)
//	buf := append(s.Buffer(), encoded...)
//	if err := s.Send(buf); err != nil { // s owns buf now
//		return err
//	}
//
//	// Receiving goroutine, in process 2: channel 7 from process 0.
//	// (Over an elastic mesh, io.EOF means process 0 left; a new
//	// Receiver(7, 0) belongs to the next process in slot 0.)
//	r := nw.Receiver(7, 0)
//	for {
//		p, err := r.Recv()
//		if err == io.EOF {
//			break // process 0 closed in order
//		} else if err != nil {
//			return err // nw.Err() says why
//		}
//		use(p)
//		r.Release()
//	}
//
// An elastic process joining a running job:
//
//	nw, err := transport.Dial(ctx, transport.Config{
//		Self: 3, Addrs: slotAddrs, Settings: settings, Secret: secret,
//		Elastic: true, Join: []string{"10.0.0.1:7000"},
//	})
//	...
//	e := nw.(transport.Elastic)
//	for ev := range e.Events() { // Joined 0, Joined 1, ..., Left 1, ...
//		...
//	}
package transport
