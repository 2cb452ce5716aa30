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

// RefusedError is a handshake with a peer that proved the secret, which
// one side refused (a duplicate, an index out of place). Dial returns it
// on both sides: the refusing side (ByPeer false) and the refused one
// (ByPeer true) when the refusal reached it. Connections that do not
// prove the secret are not refused this way: they are dropped, and Dial
// waits on.
type RefusedError struct {
	Peer   int    // the peer's process index, -1 if it gave no valid one
	Addr   string // the peer's address
	Reason string // why, from the point of view of the side reporting it
	ByPeer bool   // the peer refused us; otherwise we refused the peer
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

// MismatchError is a peer that proved the secret but runs another job: a
// setting of Config.Settings, or the process count, differs. Dial returns
// it on both sides, each from its own point of view.
type MismatchError struct {
	Peer int    // the peer's process index
	Addr string // the peer's address
	// Setting names what differs: a setting's name, or "process count".
	Setting string
	// Here and There are the values on this side and the peer's, as shown
	// in messages ("not set" for a setting one side lacks; long values
	// cut).
	Here, There string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("transport: peer %d (%s) runs another job: %s is %s here, %s there",
		e.Peer, e.Addr, show(e.Setting, 0, len(e.Setting)), e.Here, e.There)
}
