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
	"time"
)

// shake runs the handshake on c (a *tls.Conn with Config.TLS). want is
// the peer's index if we dialed it, -1 if we accepted. On success c is
// registered as the peer's connection. A failure before both sides
// proved the secret is a plain error that says why: the connection was
// not the peer's. After, a disagreement is a *RefusedError (either side
// refused) or a *MismatchError (the job differs), which fail the mesh.
func (b *builder) shake(c net.Conn, want int) error {
	cfg := b.cfg
	c.SetDeadline(time.Now().Add(cfg.Timeout))
	stop := context.AfterFunc(b.ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if tc, ok := c.(*tls.Conn); ok {
		if err := tc.Handshake(); err != nil {
			return readFailure("TLS handshake", err, cfg.Timeout)
		}
	}
	s := &step{c: c, peer: want, addr: c.RemoteAddr().String(), timeout: cfg.Timeout, log: cfg.Logger}
	if want >= 0 {
		s.addr = cfg.Addrs[want]
	}

	ours := hello{Version: protoVersion, Index: uint16(cfg.Self), Processes: uint16(len(cfg.Addrs))}
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
	if err != nil {
		return s.refuse(sameRefusal(err.Error()))
	}
	if reflected(h, ours) {
		return s.refuse(sameRefusal("our own hello came back"))
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
	// The peer knows the secret. It sends its settings once it found
	// that we do: so do we, while we read theirs (both may be larger
	// than what the connection buffers).
	sent := make(chan error, 1)
	go func() { sent <- writeMsg(c, msgSettings, b.settings) }()
	body, err := s.next(msgSettings)
	if werr := <-sent; err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	s.proven = true // from here, a disagreement is the real peer's
	if idx := int(h.Index); idx < len(cfg.Addrs) && idx != cfg.Self {
		s.peer, s.addr = idx, cfg.Addrs[idx]
	}
	settings, err := decodeSettings(body)
	if err != nil {
		return s.refuse(sameRefusal("settings: " + err.Error()))
	}
	m, r := judge(cfg.Self, len(cfg.Addrs), want, cfg.Settings, h, settings)
	if r != nil {
		return s.refuse(r)
	}
	if m != nil {
		err := &MismatchError{Peer: int(h.Index), Addr: s.addr, Setting: m.what, Here: m.here, There: m.there}
		cfg.Logger.Error(err.Error())
		s.send(fmt.Sprintf("another job: %s is %s at process %d, %s at process %d",
			show(m.what, 0, len(m.what)), m.here, cfg.Self, m.there, h.Index))
		return err
	}
	// Claim before we say ok, so that a duplicate hears why.
	if r := b.claim(s.peer, c); r != nil {
		return s.refuse(r)
	}
	err = writeMsg(c, msgOK, nil)
	if err == nil {
		_, err = s.next(msgOK)
	}
	if err != nil {
		b.unclaim(s.peer, c)
		return err
	}
	if !stop() {
		b.unclaim(s.peer, c)
		return b.ctx.Err()
	}
	c.SetDeadline(time.Time{})
	b.confirm()
	cfg.Logger.Debug("transport: connected", "self", cfg.Self, "peer", s.peer, "addr", s.addr)
	return nil
}

// step reads and refuses the messages of one handshake.
type step struct {
	c       net.Conn
	buf     []byte
	peer    int    // the peer's index, want until it proved the secret
	addr    string // the peer's address
	proven  bool   // both sides proved the secret
	timeout time.Duration
	log     *slog.Logger
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
