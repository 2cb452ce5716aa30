package transport

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// elasticTCP is the Network of Dial with Config.Elastic.
type elasticTCP struct{ *tcpNetwork }

func (n elasticTCP) Members() []int       { return n.el.members() }
func (n elasticTCP) Events() <-chan Event { return n.el.ev.out }

// dialElastic is Dial of an elastic mesh, over the listeners lns: it
// starts the network, accepts connections for as long as it runs, dials
// the Members above Self (or joins through a contact, Config.Join), and
// returns once its view of the mesh is complete (elastic.go). On failure
// it closes what it started in order, so that the processes it reached
// see it leave, not fail.
func dialElastic(ctx context.Context, cfg Config, lns []net.Listener) (Network, error) {
	n := newNetwork(cfg)
	life, cancel := context.WithCancel(context.Background())
	e := &elastic{n: n, lns: lns, cancel: cancel, inc: newIncarnation(), ev: newEvents(),
		slots: make([]slot, len(cfg.Addrs)), gone: map[uint64]bool{}, peers: map[*peer]bool{},
		dialing: true, joining: len(cfg.Join) > 0, settled: make(chan struct{}), failed: make(chan struct{})}
	n.el = e
	e.cn = newConnector(life, cfg, &n.wg)
	e.cn.shake, e.cn.fatal = e.shake, e.refused
	n.wg.Add(1 + len(lns))
	go func() {
		defer n.wg.Done()
		e.ev.run(n.done)
	}()
	for _, ln := range lns {
		go e.cn.accept(ln)
	}
	e.mu.Lock()
	for _, m := range cfg.Members {
		if m != cfg.Self {
			e.slots[m].heard = anyInc
			e.maybeDial(m)
		}
	}
	e.seekContact()
	e.check()
	e.mu.Unlock()
	var err error
	select {
	case <-e.settled:
	case <-e.failed:
	case <-n.done:
	case <-ctx.Done():
		err = e.giveUp(ctx.Err())
	}
	e.mu.Lock()
	e.failDial(err)
	e.dialing = false
	err = e.err
	e.mu.Unlock()
	if err == nil {
		err = n.Err() // failed, or Aborted
	}
	if err != nil {
		n.Close()
		return nil, err
	}
	return elasticTCP{n}, nil
}

// newIncarnation returns a random incarnation, neither 0 nor anyInc.
func newIncarnation() uint64 {
	for {
		var b [8]byte
		rand.Read(b[:])
		if v := binary.BigEndian.Uint64(b[:]); v != 0 && v != anyInc {
			return v
		}
	}
}

// shake runs the handshake of an elastic mesh on c: want is the peer's
// slot if we dialed it, -1 if we accepted it or dial a contact (dialed).
// On success the peer runs in its slot.
//
// A peer that read our ok runs us in its slot: from then on the
// connection must end in order. So before we say ok, the connection
// leaves the connector's hands (halt no longer cuts it) and the context
// no longer aborts the handshake; if the network stops before the peer's
// ok arrived, we send a close frame instead of running the peer.
func (e *elastic) shake(c net.Conn, want int, dialed bool) error {
	ours := hello{Version: protoVersion, Elastic: true, Incarnation: e.inc, Contact: dialed && want < 0}
	g, err := greet(e.cn.ctx, e.n.cfg, e.cn.settings, c, ours, rules{want: want, accepted: !dialed})
	if err != nil {
		return err
	}
	defer g.hold()
	switch {
	case g.h.Probe && !dialed:
		return e.answerProbe(g)
	case g.h.Contact && !dialed && e.memberJoinsEarly(g.s.peer):
		g.s.send(joinedStarting)
		return errAnswered
	}
	p, r, err := e.claim(g.s.peer, g.h.Incarnation, c, !dialed && g.h.Contact)
	switch {
	case err != nil:
		return err
	case r != nil:
		return g.s.refuse(r)
	}
	if err := e.commit(g); err != nil {
		e.unclaim(p)
		return err
	}
	err = writeMsg(c, msgOK, nil)
	if err == nil {
		_, err = g.s.next(msgOK)
	}
	if err != nil {
		e.unclaim(p)
		return err
	}
	c.SetDeadline(time.Time{})
	if !e.confirm(p, ours.Contact) {
		c.SetDeadline(time.Now().Add(e.n.cfg.Timeout))
		c.Write(AppendFrame(nil, Frame{Kind: KindClose, Source: uint16(e.n.self), Target: uint16(p.idx)}))
		linger(c)
		return fmt.Errorf("process %d is shutting down", e.n.self)
	}
	e.n.log.Debug("transport: connected", "self", e.n.self, "peer", p.idx, "addr", p.addr, "contact", ours.Contact)
	return nil
}

// commit takes the connection of g out of the connector's hands and the
// handshake out of the context's, before we say ok; it fails if the
// network stops already.
func (e *elastic) commit(g *greeting) error {
	e.cn.mu.Lock()
	defer e.cn.mu.Unlock()
	if e.cn.over || !g.hold() {
		return fmt.Errorf("process %d is shutting down", e.n.self)
	}
	delete(e.cn.live, g.c)
	return nil
}

// refused handles a handshake's refusal or mismatch (fatal) with a peer
// that proved the secret. While Dial runs, it fails Dial if we dialed
// the peer or wait for it; else it concerns only the peer (a joiner of
// another job, a second process for a slot), which fails on its side:
// the mesh runs on, and a dialer forgets the slot.
func (e *elastic) refused(err error, dialed bool) {
	peer := -1
	var r *RefusedError
	var m *MismatchError
	switch {
	case errors.As(err, &r):
		peer = r.Peer
		if r.ByPeer {
			e.n.log.Warn(err.Error())
		}
	case errors.As(err, &m):
		peer = m.Peer
	}
	known := peer >= 0 && peer < len(e.slots)
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.dialing && (dialed || known && e.missing(peer)):
		e.failDial(err)
	case dialed && known:
		e.slots[peer].heard = 0
	}
}

// giveUp is the error of a Dial that ended with cause: it names the
// processes heard of and missing, or the contacts tried.
func (e *elastic) giveUp(cause error) error {
	e.mu.Lock()
	joining := e.joining
	var miss []int
	for i := range e.slots {
		if e.missing(i) {
			miss = append(miss, i)
		}
	}
	e.mu.Unlock()
	if !joining {
		return e.cn.missingError(cause, miss)
	}
	if errors.Is(cause, context.DeadlineExceeded) {
		cause = fmt.Errorf("no mesh within %v", e.n.cfg.DialTimeout)
	}
	e.cn.mu.Lock()
	defer e.cn.mu.Unlock()
	last := ""
	if e.cn.contactErr != nil {
		last = ": " + e.cn.contactErr.Error()
	}
	return fmt.Errorf("transport: process %d: %w; no process of the running job let us in at %s%s",
		e.n.self, cause, strings.Join(e.n.cfg.Join, ", "), last)
}
