package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// Dial joins the mesh as process cfg.Self: it listens on Addrs[Self] (or
// takes cfg.Listener), dials every process with a higher index, accepts
// every process with a lower one, and handshakes on each connection. It
// returns when the mesh is complete, or fails when a peer that proved the
// secret disagrees (on either side: *RefusedError, *MismatchError), ctx
// ends, or DialTimeout passes first. A connection that does not prove
// the secret (a stranger, garbage, silence for Timeout, a failed TLS
// handshake) is logged and dropped: Dial keeps accepting, and dials again
// an address where something else answered.
func Dial(ctx context.Context, cfg Config) (Network, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		if cfg.Listener != nil {
			cfg.Listener.Close()
		}
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	lns := []net.Listener{cfg.Listener}
	if cfg.Listener == nil {
		if lns, err = listenAt(ctx, cfg.Self, cfg.Addrs, cfg.Logger); err != nil {
			return nil, err
		}
	}
	b := &builder{cfg: cfg, ctx: ctx, conns: make([]net.Conn, len(cfg.Addrs)),
		dialErr: make([]error, len(cfg.Addrs)), live: map[net.Conn]bool{},
		failed: make(chan struct{}), complete: make(chan struct{}),
		settings: settingsBody(cfg.Settings)}
	if cfg.TLS != nil {
		b.tlsServer, b.tlsClient = serverTLS(cfg.TLS), clientTLS(cfg.TLS)
	}
	b.missing = len(cfg.Addrs) - 1
	if b.missing == 0 {
		close(b.complete)
	}
	for _, ln := range lns {
		b.wg.Add(1)
		go b.accept(ln)
	}
	for j := cfg.Self + 1; j < len(cfg.Addrs); j++ {
		b.wg.Add(1)
		go b.dial(j)
	}
	select {
	case <-b.complete:
	case <-b.failed:
	case <-ctx.Done():
		b.giveUp(ctx.Err())
	}
	for _, ln := range lns {
		ln.Close()
	}
	b.mu.Lock()
	b.over = true
	err = b.err
	for c := range b.live {
		if err != nil || !b.registered(c) {
			c.Close() // stray or unfinished handshakes
		}
	}
	b.mu.Unlock()
	cancel()
	b.wg.Wait()
	if err != nil {
		for _, c := range b.conns {
			if c != nil {
				c.Close()
			}
		}
		return nil, err
	}
	return newTCP(cfg, b.conns), nil
}

// builder builds the mesh of one Dial.
type builder struct {
	cfg Config
	ctx context.Context
	wg  sync.WaitGroup

	settings             []byte // our settings message body
	tlsServer, tlsClient *tls.Config

	mu       sync.Mutex
	conns    []net.Conn // established, by peer
	dialErr  []error    // last error dialing each peer
	live     map[net.Conn]bool
	dropped  int    // accepted connections dropped before the proofs
	lastDrop string // the last of them: from where and why
	missing  int
	over     bool // Dial is returning: no more connections
	err      error
	failed   chan struct{} // closed with err set
	complete chan struct{} // closed when missing reaches 0
}

// fatal reports whether a handshake's error fails the mesh: a refusal or
// a mismatch after both sides proved the secret. Anything else drops
// only the connection.
func fatal(err error) bool {
	var r *RefusedError
	var m *MismatchError
	return errors.As(err, &r) || errors.As(err, &m)
}

func (b *builder) registered(c net.Conn) bool {
	for _, r := range b.conns {
		if r == c {
			return true
		}
	}
	return false
}

// track records c as open; it reports false if Dial is already over.
func (b *builder) track(c net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.over {
		c.Close()
		return false
	}
	b.live[c] = true
	return true
}

func (b *builder) untrack(c net.Conn) {
	b.mu.Lock()
	delete(b.live, c)
	b.mu.Unlock()
	c.Close()
}

// fail fails Dial with err, unless it failed already.
func (b *builder) fail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil && !b.over {
		b.err = err
		close(b.failed)
	}
}

// claim reserves peer i for c, refusing a second connection from it.
func (b *builder) claim(i int, c net.Conn) *refusal {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conns[i] != nil {
		return sameRefusal(fmt.Sprintf("process %d is already connected", i))
	}
	b.conns[i] = c
	return nil
}

// unclaim frees the reservation of claim after a failed handshake.
func (b *builder) unclaim(i int, c net.Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conns[i] == c {
		b.conns[i] = nil
	}
}

// confirm counts the claimed connection to a peer as established.
func (b *builder) confirm() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.missing--
	if b.missing == 0 {
		close(b.complete)
	}
}

// giveUp fails Dial because ctx ended, naming the peers still missing.
func (b *builder) giveUp(cause error) {
	b.mu.Lock()
	var miss []string
	for i, c := range b.conns {
		if c != nil || i == b.cfg.Self {
			continue
		}
		s := fmt.Sprintf("%d (%s)", i, b.cfg.Addrs[i])
		if b.dialErr[i] != nil {
			s += ": " + b.dialErr[i].Error()
		}
		miss = append(miss, s)
	}
	dropped := ""
	if b.dropped > 0 {
		dropped = fmt.Sprintf("; dropped %d connection(s) that did not prove the secret, the last from %s", b.dropped, b.lastDrop)
	}
	b.mu.Unlock()
	if errors.Is(cause, context.DeadlineExceeded) {
		cause = fmt.Errorf("no mesh within %v", b.cfg.DialTimeout)
	}
	b.fail(fmt.Errorf("transport: process %d: %w; missing process %s%s", b.cfg.Self, cause, strings.Join(miss, ", process "), dropped))
}

// ending reports whether Dial is returning: errors are expected then.
func (b *builder) ending() bool { return b.ctx.Err() != nil }

// accept handshakes with the processes that dial us, each connection in
// its own goroutine, until the listener closes. A connection that fails
// before the proofs is logged and dropped; accept errors (out of file
// descriptors, say) are logged and waited out.
func (b *builder) accept(ln net.Listener) {
	defer b.wg.Done()
	wait := 5 * time.Millisecond
	for {
		raw, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || b.ending() {
				return
			}
			b.cfg.Logger.Warn(fmt.Sprintf("transport: process %d: accept: %v", b.cfg.Self, err))
			select {
			case <-time.After(wait):
			case <-b.ctx.Done():
			}
			wait = min(2*wait, time.Second)
			continue
		}
		wait = 5 * time.Millisecond
		c := raw
		if b.tlsServer != nil {
			c = tls.Server(&coalescer{Conn: raw}, b.tlsServer)
		}
		if !b.track(c) {
			return
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			err := b.shake(c, -1)
			if err == nil {
				return
			}
			b.untrack(c)
			switch {
			case fatal(err):
				b.fail(err)
			case !b.ending():
				from := raw.RemoteAddr().String()
				b.cfg.Logger.Warn(fmt.Sprintf("transport: process %d: dropped a connection from %s: %v", b.cfg.Self, from, err))
				b.mu.Lock()
				b.dropped++
				b.lastDrop = from + ": " + err.Error()
				b.mu.Unlock()
			}
		}()
	}
}

// dial reaches process j, retrying with backoff until the handshake
// succeeds, fails the mesh, or ctx ends. A handshake that fails before
// the proofs (something else answered at j's address, or j dropped us)
// is logged and tried again.
func (b *builder) dial(j int) {
	defer b.wg.Done()
	var d net.Dialer
	wait := 10 * time.Millisecond
	for {
		raw, err := d.DialContext(b.ctx, "tcp", b.cfg.Addrs[j])
		if err == nil {
			c := raw
			if b.tlsClient != nil {
				c = tls.Client(&coalescer{Conn: raw}, b.tlsClient)
			}
			if !b.track(c) {
				return
			}
			if err = b.shake(c, j); err == nil {
				return
			}
			b.untrack(c)
			if fatal(err) {
				b.fail(err)
				return
			}
			if !b.ending() {
				b.cfg.Logger.Warn(fmt.Sprintf("transport: process %d: no handshake with process %d at %s: %v; trying again",
					b.cfg.Self, j, b.cfg.Addrs[j], err))
			}
			err = fmt.Errorf("handshake with %s: %w", raw.RemoteAddr(), err)
		}
		if b.ending() {
			return
		}
		b.mu.Lock()
		b.dialErr[j] = err
		b.mu.Unlock()
		select {
		case <-time.After(wait):
		case <-b.ctx.Done():
			return
		}
		wait = min(2*wait, time.Second)
	}
}
