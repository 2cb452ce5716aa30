package transport

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// shake runs the handshake on c (a *tls.Conn with Config.TLS). want is
// the peer's index if we dialed it, -1 if we accepted. On success c is
// registered as the peer's connection. A failure before both sides
// proved the secret is a plain error that says why: the connection was
// not the peer's. After, a disagreement is a *RefusedError (either side
// refused) or a *MismatchError (the job differs), which fail the mesh.
func (b *builder) shake(c net.Conn, want int) error {
	ours := hello{Version: protoVersion, Index: uint16(b.cfg.Self), Processes: uint16(len(b.cfg.Addrs))}
	g, err := greet(b.ctx, b.cfg, b.settings, c, ours, rules{want: want, accepted: want < 0})
	if err != nil {
		return err
	}
	defer g.hold()
	// Claim before we say ok, so that a duplicate hears why.
	if r := b.claim(g.s.peer, c); r != nil {
		return g.s.refuse(r)
	}
	if err := g.finish(b.ctx); err != nil {
		b.unclaim(g.s.peer, c)
		return err
	}
	b.confirm()
	b.cfg.Logger.Debug("transport: connected", "self", b.cfg.Self, "peer", g.s.peer, "addr", g.s.addr)
	return nil
}

// greeting is a handshake that got as far as the judgement: both sides
// proved the secret, and the peer runs our job.
type greeting struct {
	c     net.Conn
	s     *step
	h     hello       // the peer's
	watch func() bool // stops the watch of the context

	mu      sync.Mutex
	held    bool // the context no longer aborts the handshake
	aborted bool // the context ended first, and aborted it
}

// hold ends the watch of the context, so that only the handshake's
// deadline bounds what is left of it. It reports false if the context
// ended first (then the connection's deadline has passed).
func (g *greeting) hold() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.aborted {
		g.held = true
		g.watch()
	}
	return !g.aborted
}

// greet runs the handshake on c up to the ok: hellos (ours is ours,
// with Self and the nonce filled in), proofs, settings, and the judgement
// by r (whose self, procs and elastic greet fills in from cfg and ours).
// It returns the errors shake describes; on success c's deadline is the
// handshake's until finish.
func greet(ctx context.Context, cfg Config, settings []byte, c net.Conn, ours hello, r rules) (*greeting, error) {
	c.SetDeadline(time.Now().Add(cfg.Timeout))
	g := &greeting{c: c}
	g.watch = context.AfterFunc(ctx, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.held {
			g.aborted = true
			c.SetDeadline(time.Unix(1, 0))
		}
	})
	if err := g.greetOn(cfg, settings, ours, r); err != nil {
		g.hold()
		return nil, err
	}
	return g, nil
}

func (g *greeting) greetOn(cfg Config, settings []byte, ours hello, r rules) error {
	c := g.c
	if tc, ok := c.(*tls.Conn); ok {
		if err := tc.Handshake(); err != nil {
			return readFailure("TLS handshake", err, cfg.Timeout)
		}
	}
	s := &step{c: c, peer: r.want, addr: c.RemoteAddr().String(), timeout: cfg.Timeout, log: cfg.Logger}
	if r.want >= 0 {
		s.addr = cfg.Addrs[r.want]
	}
	ours.Index, ours.Processes = uint16(cfg.Self), uint16(len(cfg.Addrs))
	rand.Read(ours.Nonce[:])
	own := helloBody(ours)
	if err := writeMsg(c, msgHello, own); err != nil {
		return err
	}
	theirs, err := s.next(msgHello)
	if err != nil {
		return err
	}
	theirs = bytes.Clone(theirs)
	h, err := decodeHello(theirs)
	switch {
	case err != nil:
		return s.refuse(sameRefusal(err.Error()))
	case reflected(h, ours):
		return s.refuse(sameRefusal("our own hello came back"))
	case ours.Elastic && h.Elastic && h.Incarnation == ours.Incarnation:
		return s.refuse(sameRefusal("this process answered: it is its own address"))
	}
	if err := writeMsg(c, msgProof, proof(cfg.Secret, own, theirs)); err != nil {
		return err
	}
	p, err := s.next(msgProof)
	if err != nil {
		return err
	}
	if !checkProof(cfg.Secret, own, theirs, p) {
		return s.refuse(sameRefusal("wrong secret"))
	}
	if err := s.swapSettings(settings); err != nil {
		return err
	}
	if idx := int(h.Index); idx < len(cfg.Addrs) && idx != cfg.Self {
		s.peer, s.addr = idx, cfg.Addrs[idx]
	}
	r.self, r.procs, r.elastic = cfg.Self, len(cfg.Addrs), ours.Elastic
	if err := s.judge(cfg, r, h); err != nil {
		return err
	}
	g.s, g.h = s, h
	return nil
}

// swapSettings sends ours and reads the peer's settings. The peer knows
// the secret: it sends its settings once it found that we do, so do we,
// while we read theirs (both may be larger than what the connection
// buffers).
func (s *step) swapSettings(settings []byte) error {
	sent := make(chan error, 1)
	go func() { sent <- writeMsg(s.c, msgSettings, settings) }()
	body, err := s.next(msgSettings)
	if werr := <-sent; err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	s.proven = true // from here, a disagreement is the real peer's
	s.settings = body
	return nil
}

// judge decides on the peer by r, from its hello and its settings.
func (s *step) judge(cfg Config, r rules, h hello) error {
	settings, err := decodeSettings(s.settings)
	if err != nil {
		return s.refuse(sameRefusal("settings: " + err.Error()))
	}
	m, rf := judgeAs(r, cfg.Settings, h, settings)
	if rf != nil {
		return s.refuse(rf)
	}
	if m != nil {
		err := &MismatchError{Peer: int(h.Index), Addr: s.addr, Setting: m.what, Here: m.here, There: m.there}
		cfg.Logger.Error(err.Error())
		s.send(fmt.Sprintf("another job: %s is %s at process %d, %s at process %d",
			show(m.what, 0, len(m.what)), m.here, cfg.Self, m.there, h.Index))
		return err
	}
	return nil
}

// finish says ok and reads the peer's ok, then lifts the handshake's
// deadline. It fails if ctx ended.
func (g *greeting) finish(ctx context.Context) error {
	err := writeMsg(g.c, msgOK, nil)
	if err == nil {
		_, err = g.s.next(msgOK)
	}
	if err != nil {
		return err
	}
	if !g.hold() {
		return ctx.Err()
	}
	g.c.SetDeadline(time.Time{})
	return nil
}

// step reads and refuses the messages of one handshake.
type step struct {
	c        net.Conn
	buf      []byte
	settings []byte // the peer's, once swapped
	peer     int    // the peer's index, want until it proved the secret
	addr     string // the peer's address
	proven   bool   // both sides proved the secret
	timeout  time.Duration
	log      *slog.Logger
}

// next reads the next message, which must be of type want.
func (s *step) next(want msgType) ([]byte, error) {
	t, body, err := readMsg(s.c, &s.buf)
	switch {
	case err != nil:
		return nil, readFailure(want.String(), err, s.timeout)
	case t == msgRefuse && s.proven:
		return nil, &RefusedError{Peer: s.peer, Addr: s.addr, Reason: decodeReason(body), ByPeer: true}
	case t == msgRefuse:
		return nil, fmt.Errorf("it refused us: %s", decodeReason(body))
	case t != want:
		return nil, s.refuse(sameRefusal(fmt.Sprintf("%v where %v was due", t, want)))
	}
	return body, nil
}

// refuse tells the peer why and closes our side. Once both sides proved
// the secret, it logs the refusal and returns it as a *RefusedError;
// before, it returns a plain error.
func (s *step) refuse(r *refusal) error {
	s.send(r.peer)
	if !s.proven {
		return errors.New(r.log)
	}
	err := &RefusedError{Peer: s.peer, Addr: s.addr, Reason: r.log}
	s.log.Error(err.Error())
	return err
}

// send sends a refusal, bounded, and closes our side.
func (s *step) send(reason string) {
	if len(reason) > MaxReason {
		reason = reason[:MaxReason]
	}
	writeMsg(s.c, msgRefuse, []byte(reason))
	linger(s.c)
}

// readFailure says why reading the handshake's step what failed.
func readFailure(what string, err error, timeout time.Duration) error {
	var proto *protoError
	switch {
	case errors.As(err, &proto):
		return err
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("no %s within %v", what, timeout)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("closed before its %s", what)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// protoError is a handshake message that is not one (garbage).
type protoError struct{ err error }

func (e *protoError) Error() string {
	return "not a weir transport peer: " + strings.TrimPrefix(e.err.Error(), "transport: handshake: ")
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
		return 0, nil, &protoError{err} // checks the type and bounds the length
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
