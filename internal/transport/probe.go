package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
)

// A process of a member's slot of an elastic job starts the job with the
// other members, or, if the job already runs (its slot's process left,
// and this one takes the slot again), joins it. Probe tells which: it
// runs the handshake with a process of the job (process 0) with the
// probe flag, and that process answers, once the proofs and settings
// have checked out, with a refusal that says whether its Dial has
// returned (the members' mesh is complete: the job runs) or not. The
// answer claims no slot and raises no event; a probe from a process of
// another job fails on the settings, as any handshake does.

// The answers to a probe, and to a process of a member's slot that asks
// to join while the members start the job (it must start with them).
const (
	probeRunning   = "the job runs"
	probeStarting  = "the job is starting"
	joinedStarting = "the job is starting with this slot among its members: start with them, without joining"
)

// errAnswered is what a handshake returns that answered a probe, or
// turned away a member's join while the job starts: no connection, and
// nothing to report (it fails no Dial).
var errAnswered = errors.New("transport: answered without a connection")

// Probe asks the process at addr whether the elastic job of cfg (its
// settings, secret and TLS; Self is this process's slot) runs: true once
// the members' mesh is complete, false while the members still start it.
// It tries once: an unreachable address is an error.
func Probe(ctx context.Context, cfg Config, addr string) (bool, error) {
	cfg.Elastic, cfg.Members, cfg.Join = true, nil, []string{addr}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return false, err
	}
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false, err
	}
	defer raw.Close()
	c := raw
	if cfg.TLS != nil {
		c = tls.Client(raw, clientTLS(cfg.TLS))
	}
	ours := hello{Version: protoVersion, Elastic: true, Incarnation: newIncarnation(), Contact: true, Probe: true}
	g, err := greet(ctx, cfg, settingsBody(cfg.Settings), c, ours, rules{want: -1})
	if err != nil {
		return false, err
	}
	g.hold()
	_, err = g.s.next(msgOK)
	var r *RefusedError
	switch {
	case errors.As(err, &r) && r.ByPeer && r.Reason == probeRunning:
		return true, nil
	case errors.As(err, &r) && r.ByPeer && r.Reason == probeStarting:
		return false, nil
	case err == nil:
		err = errors.New("it took the probe for a process that joins")
	}
	return false, fmt.Errorf("transport: probing %s: %w", addr, err)
}

// answerProbe answers a probe on a handshake that got to its end.
func (e *elastic) answerProbe(g *greeting) error {
	e.mu.Lock()
	running := e.ready
	e.mu.Unlock()
	answer := probeStarting
	if running {
		answer = probeRunning
	}
	g.s.send(answer)
	return errAnswered
}

// memberJoinsEarly reports whether a contact hello from slot i comes
// while this process starts the job with i among its members: the
// process of slot i must start with the members, not join.
func (e *elastic) memberJoinsEarly(i int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := &e.slots[i]
	return e.dialing && !e.ready && s.heard == anyInc && s.p == nil
}
