package transport

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// Dial joins the mesh as process cfg.Self: it listens on Addrs[Self] (or
// takes cfg.Listener), dials every process with a higher index, accepts
// every process with a lower one, and handshakes on each connection. It
// returns when the mesh is complete, or fails when a handshake is refused
// (by either side), ctx ends, or DialTimeout passes first.
func Dial(ctx context.Context, cfg Config) (Network, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		if cfg.Listener != nil {
			cfg.Listener.Close()
		}
		return nil, err
	}
	ln := cfg.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Addrs[cfg.Self]); err != nil {
			return nil, fmt.Errorf("transport: process %d: %w", cfg.Self, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	b := &builder{cfg: cfg, ctx: ctx, conns: make([]net.Conn, len(cfg.Addrs)),
		dialErr: make([]error, len(cfg.Addrs)), live: map[net.Conn]bool{},
		failed: make(chan struct{}), complete: make(chan struct{})}
	b.missing = len(cfg.Addrs) - 1
	if b.missing == 0 {
		close(b.complete)
	}
	b.wg.Add(1)
	go b.accept(ln)
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
	ln.Close()
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

	mu       sync.Mutex
	conns    []net.Conn // established, by peer
	dialErr  []error    // last error dialing each peer
	live     map[net.Conn]bool
	missing  int
	over     bool // Dial is returning: no more connections
	err      error
	failed   chan struct{} // closed with err set
	complete chan struct{} // closed when missing reaches 0
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

// fatal fails Dial with err, unless it failed already.
func (b *builder) fatal(err error) {
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
	b.mu.Unlock()
	if errors.Is(cause, context.DeadlineExceeded) {
		cause = fmt.Errorf("no mesh within %v", b.cfg.DialTimeout)
	}
	b.fatal(fmt.Errorf("transport: process %d: %w; missing process %s", b.cfg.Self, cause, strings.Join(miss, ", process ")))
}

// accept handshakes with the processes that dial us.
func (b *builder) accept(ln net.Listener) {
	defer b.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				b.fatal(fmt.Errorf("transport: process %d: accept: %w", b.cfg.Self, err))
			}
			return
		}
		if !b.track(c) {
			return
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			if err := b.shake(c, -1); err != nil {
				b.untrack(c)
				var r *RefusedError
				if errors.As(err, &r) && !r.stray {
					b.fatal(err)
				} // else not one of ours, or gone: keep waiting for the real peer
			}
		}()
	}
}

// dial reaches process j, retrying with backoff until the handshake
// succeeds, is refused, or ctx ends.
func (b *builder) dial(j int) {
	defer b.wg.Done()
	var d net.Dialer
	wait := 10 * time.Millisecond
	for {
		c, err := d.DialContext(b.ctx, "tcp", b.cfg.Addrs[j])
		if err == nil && b.track(c) {
			err = b.shake(c, j)
			if err == nil {
				return
			}
			b.untrack(c)
			var r *RefusedError
			if errors.As(err, &r) {
				b.fatal(err)
				return
			}
		}
		if b.ctx.Err() != nil {
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

// shake runs the handshake on c. want is the peer's index if we dialed
// it, -1 if we accepted. On success c is registered as the peer's
// connection. Refusals, by either side, are *RefusedError.
func (b *builder) shake(c net.Conn, want int) error {
	cfg := b.cfg
	c.SetDeadline(time.Now().Add(cfg.Timeout))
	stop := context.AfterFunc(b.ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	addr := c.RemoteAddr().String()

	ours := hello{Version: protoVersion, Index: uint16(cfg.Self), Processes: uint16(len(cfg.Addrs)),
		Fingerprint: cfg.Fingerprint}
	rand.Read(ours.Nonce[:])
	own := helloBody(ours)
	if err := writeMsg(c, msgHello, own); err != nil {
		return err
	}
	peer := want
	stray := false
	refuse := func(r *refusal) error {
		err := &RefusedError{Peer: peer, Addr: addr, Reason: r.log, stray: stray}
		cfg.Logger.Error(err.Error())
		writeMsg(c, msgRefuse, []byte(r.peer))
		linger(c)
		return err
	}
	var buf []byte
	next := func(want msgType) ([]byte, error) {
		t, body, err := readMsg(c, &buf)
		switch {
		case err != nil:
			return nil, err
		case t == msgRefuse:
			return nil, &RefusedError{Peer: peer, Addr: addr, Reason: decodeReason(body), ByPeer: true}
		case t != want:
			stray = want == msgHello
			return nil, refuse(sameRefusal(fmt.Sprintf("%v where %v was due", t, want)))
		}
		return body, nil
	}

	theirs, err := next(msgHello)
	if err != nil {
		return err
	}
	theirs = append([]byte(nil), theirs...)
	h, err := decodeHello(theirs)
	if err != nil {
		stray = errors.Is(err, errBadMagic)
		return refuse(sameRefusal(err.Error()))
	}
	if r := checkHello(h, ours, cfg.Self, len(cfg.Addrs), want); r != nil {
		if int(h.Index) < len(cfg.Addrs) {
			peer = int(h.Index)
		}
		return refuse(r)
	}
	peer = int(h.Index)
	if want >= 0 {
		addr = cfg.Addrs[peer]
	}
	if err := writeMsg(c, msgProof, proof(cfg.Secret, own, theirs)); err != nil {
		return err
	}
	p, err := next(msgProof)
	if err != nil {
		return err
	}
	if !checkProof(cfg.Secret, own, theirs, p) {
		return refuse(sameRefusal("wrong secret"))
	}
	// Claim before we say ok, so that a duplicate hears why.
	if r := b.claim(peer, c); r != nil {
		return refuse(r)
	}
	err = writeMsg(c, msgOK, nil)
	if err == nil {
		_, err = next(msgOK)
	}
	if err != nil {
		b.unclaim(peer, c)
		return err
	}
	if !stop() {
		b.unclaim(peer, c)
		return b.ctx.Err()
	}
	c.SetDeadline(time.Time{})
	b.confirm()
	cfg.Logger.Debug("transport: connected", "self", cfg.Self, "peer", peer, "addr", cfg.Addrs[peer])
	return nil
}

func writeMsg(c net.Conn, t msgType, body []byte) error {
	_, err := c.Write(appendMsg(nil, t, body))
	return err
}

// readMsg reads exactly one handshake message from c (nothing beyond it:
// frames may follow), using *buf as storage.
func readMsg(c net.Conn, buf *[]byte) (msgType, []byte, error) {
	b := slices.Grow((*buf)[:0], msgHeaderSize)[:msgHeaderSize]
	if _, err := io.ReadFull(c, b); err != nil {
		return 0, nil, err
	}
	if _, _, _, err := splitMsg(b); err != nil {
		return 0, nil, err // checks the type and bounds the length
	}
	l := msgHeaderSize + int(binary.BigEndian.Uint16(b[1:]))
	b = slices.Grow(b, l)[:l]
	*buf = b
	if _, err := io.ReadFull(c, b[msgHeaderSize:]); err != nil {
		return 0, nil, err
	}
	t, body, _, err := splitMsg(b)
	return t, body, err
}

// linger ends a refused connection without a reset: it shuts our side,
// then reads until the peer closes (bounded), so that our refusal
// reaches it.
func linger(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	c.SetReadDeadline(time.Now().Add(time.Second))
	io.Copy(io.Discard, io.LimitReader(c, 1<<16))
}
