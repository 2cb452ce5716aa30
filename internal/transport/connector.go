package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// connector makes connections for a mesh: it accepts them on listeners
// and dials addresses, each with the handshake shake, and tracks them
// while they handshake. Dial's builder and an elastic mesh use it.
type connector struct {
	cfg                  Config
	ctx                  context.Context
	wg                   *sync.WaitGroup
	settings             []byte // our settings message body
	tlsServer, tlsClient *tls.Config

	// shake runs the handshake on a new connection: want is the peer's
	// index if known, dialed whether we dialed it.
	shake func(c net.Conn, want int, dialed bool) error
	// fatal is called with a handshake's error after both sides proved
	// the secret (fatal(err)).
	fatal func(err error, dialed bool)

	mu         sync.Mutex
	live       map[net.Conn]bool
	dialErr    []error // last error dialing each process
	contactErr error   // last error dialing a joiner's contacts
	dropped    int     // accepted connections dropped before the proofs
	lastDrop   string  // the last of them: from where and why
	over       bool    // no more connections
}

func newConnector(ctx context.Context, cfg Config, wg *sync.WaitGroup) *connector {
	cn := &connector{cfg: cfg, ctx: ctx, wg: wg, settings: settingsBody(cfg.Settings),
		live: map[net.Conn]bool{}, dialErr: make([]error, len(cfg.Addrs))}
	if cfg.TLS != nil {
		cn.tlsServer, cn.tlsClient = serverTLS(cfg.TLS), clientTLS(cfg.TLS)
	}
	return cn
}

// fatal reports whether a handshake's error fails the mesh: a refusal or
// a mismatch after both sides proved the secret. Anything else drops
// only the connection.
func fatal(err error) bool {
	var r *RefusedError
	var m *MismatchError
	return errors.As(err, &r) || errors.As(err, &m)
}

// track records c as open; it reports false if no more connections are
// made.
func (cn *connector) track(c net.Conn) bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.over {
		c.Close()
		return false
	}
	cn.live[c] = true
	return true
}

func (cn *connector) untrack(c net.Conn) {
	cn.mu.Lock()
	delete(cn.live, c)
	cn.mu.Unlock()
	c.Close()
}

// ending reports whether the connector stops: errors are expected then.
func (cn *connector) ending() bool { return cn.ctx.Err() != nil }

// accept handshakes with the processes that dial us, each connection in
// its own goroutine, until the listener closes. A connection that fails
// before the proofs is logged and dropped; accept errors (out of file
// descriptors, say) are logged and waited out.
func (cn *connector) accept(ln net.Listener) {
	defer cn.wg.Done()
	wait := 5 * time.Millisecond
	for {
		raw, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || cn.ending() {
				return
			}
			cn.cfg.Logger.Warn(fmt.Sprintf("transport: process %d: accept: %v", cn.cfg.Self, err))
			select {
			case <-time.After(wait):
			case <-cn.ctx.Done():
			}
			wait = min(2*wait, time.Second)
			continue
		}
		wait = 5 * time.Millisecond
		c := raw
		if cn.tlsServer != nil {
			c = tls.Server(&coalescer{Conn: raw}, cn.tlsServer)
		}
		if !cn.track(c) {
			return
		}
		cn.wg.Add(1)
		go func() {
			defer cn.wg.Done()
			err := cn.shake(c, -1, false)
			if err == nil {
				return
			}
			cn.untrack(c)
			switch {
			case errors.Is(err, errAnswered):
			case fatal(err):
				cn.fatal(err, false)
			case !cn.ending():
				from := raw.RemoteAddr().String()
				cn.cfg.Logger.Warn(fmt.Sprintf("transport: process %d: dropped a connection from %s: %v", cn.cfg.Self, from, err))
				cn.mu.Lock()
				cn.dropped++
				cn.lastDrop = from + ": " + err.Error()
				cn.mu.Unlock()
			}
		}()
	}
}

// dial reaches process want at its address, or (want -1) a joiner's
// contact at one of addrs, tried in turn. It retries with backoff until
// the handshake succeeds, fails the mesh, ctx ends, or keepOn (if not
// nil) says to stop; it reports whether it succeeded. A handshake that
// fails before the proofs (something else answered at the address, or
// the peer dropped us) is logged and tried again.
func (cn *connector) dial(want int, addrs []string, keepOn func() bool) bool {
	var d net.Dialer
	wait := 10 * time.Millisecond
	for k := 0; ; k++ {
		if keepOn != nil && !keepOn() {
			return false
		}
		addr := addrs[k%len(addrs)]
		raw, err := d.DialContext(cn.ctx, "tcp", addr)
		if err == nil {
			c := raw
			if cn.tlsClient != nil {
				c = tls.Client(&coalescer{Conn: raw}, cn.tlsClient)
			}
			if !cn.track(c) {
				return false
			}
			if err = cn.shake(c, want, true); err == nil {
				return true
			}
			cn.untrack(c)
			if fatal(err) {
				cn.fatal(err, true)
				return false
			}
			if !cn.ending() {
				cn.cfg.Logger.Warn(fmt.Sprintf("transport: process %d: no handshake with %s: %v; trying again",
					cn.cfg.Self, whom(want, addr), err))
			}
			err = fmt.Errorf("handshake with %s: %w", raw.RemoteAddr(), err)
		}
		if cn.ending() {
			return false
		}
		cn.mu.Lock()
		if want >= 0 {
			cn.dialErr[want] = err
		} else {
			cn.contactErr = err
		}
		cn.mu.Unlock()
		if (k+1)%len(addrs) != 0 {
			continue // the next contact at once
		}
		select {
		case <-time.After(wait):
		case <-cn.ctx.Done():
			return false
		}
		wait = min(2*wait, time.Second)
	}
}

// whom names the process dialed: want at addr, or a contact at addr.
func whom(want int, addr string) string {
	if want < 0 {
		return "the running job at " + addr
	}
	return fmt.Sprintf("process %d at %s", want, addr)
}
