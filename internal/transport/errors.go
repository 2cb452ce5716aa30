package transport

import (
	"errors"
	"fmt"
	"strings"
)

// ErrClosed is returned by Send and Recv, and by Err, once Close was called.
var ErrClosed = errors.New("transport: network closed")

// ErrPeerClosed is wrapped (in a *PeerError) by Send once the receiving
// process closed its network in order.
var ErrPeerClosed = errors.New("shut down")

// ErrPeerAborted is wrapped (in a *PeerError) by the error of a network
// whose peer failed and said why in its close frame.
var ErrPeerAborted = errors.New("failed")

// PeerError is a failure of the connection to one peer: lost (no heartbeat,
// reset, closed without a close frame), a protocol error, or an orderly
// shutdown of the peer (ErrPeerClosed).
type PeerError struct {
	Peer int    // the peer's process index
	Addr string // the peer's address, "local" for in-process peers
	Err  error  // what happened
}

func (e *PeerError) Error() string {
	// Errors of this package say "transport: " already: say it once.
	return fmt.Sprintf("transport: peer %d (%s): %s", e.Peer, e.Addr, strings.TrimPrefix(e.Err.Error(), "transport: "))
}

func (e *PeerError) Unwrap() error { return e.Err }

// RefusedError is a handshake that one side refused. Dial returns it on
// both sides: the refusing side (ByPeer false) and the refused one (ByPeer
// true) when the refusal reached it.
type RefusedError struct {
	Peer   int    // the peer's process index, -1 if it gave no valid one
	Addr   string // the peer's address
	Reason string // why, from the point of view of the side reporting it
	ByPeer bool   // the peer refused us; otherwise we refused the peer

	stray bool // the connection did not come from this transport
}

func (e *RefusedError) Error() string {
	switch {
	case e.ByPeer:
		return fmt.Sprintf("transport: peer %d (%s) refused us: %s", e.Peer, e.Addr, e.Reason)
	case e.Peer < 0:
		return fmt.Sprintf("transport: refused a connection from %s: %s", e.Addr, e.Reason)
	default:
		return fmt.Sprintf("transport: refused peer %d (%s): %s", e.Peer, e.Addr, e.Reason)
	}
}
