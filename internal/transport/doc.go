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
// Then frames flow both ways: a HeaderSize header (kind, channel, source,
// target, length, sequence) and a payload of at most MaxPayload bytes.
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
package transport
