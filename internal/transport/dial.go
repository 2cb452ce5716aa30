package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
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
//
// With Config.Elastic, Dial returns an Elastic once this process is
// connected to every process it heard of: the Members started with it,
// or, joining (Config.Join), those its contact and they told it of. It
// keeps accepting newcomers while the network runs. A peer that proved
// the secret but disagrees fails Dial only if it is one this process
// dialed or waits for; a newcomer that disagrees is refused, and the
// mesh runs on. A Dial that fails leaves in order whoever it reached.
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
	lns, err := listeners(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Elastic {
		return dialElastic(ctx, cfg, lns)
	}
	b := &builder{conns: make([]net.Conn, len(cfg.Addrs)),
		failed: make(chan struct{}), complete: make(chan struct{})}
	b.connector = newConnector(ctx, cfg, &b.wg)
	b.connector.shake = func(c net.Conn, want int, _ bool) error { return b.shake(c, want) }
	b.connector.fatal = func(err error, _ bool) { b.fail(err) }
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
		go func() {
			defer b.wg.Done()
			b.dial(j, []string{cfg.Addrs[j]}, nil)
		}()
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

// listeners returns cfg.Listener, or listens on Addrs[Self].
func listeners(ctx context.Context, cfg Config) ([]net.Listener, error) {
	if cfg.Listener != nil {
		return []net.Listener{cfg.Listener}, nil
	}
	return listenAt(ctx, cfg.Self, cfg.Addrs, cfg.Logger)
}

// builder builds the mesh of one Dial.
type builder struct {
	*connector
	wg sync.WaitGroup

	// Under connector.mu.
	conns    []net.Conn // established, by peer
	missing  int
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
	var miss []int
	for i, c := range b.conns {
		if c == nil && i != b.cfg.Self {
			miss = append(miss, i)
		}
	}
	b.mu.Unlock()
	b.fail(b.missingError(cause, miss))
}

// missingError is the error of a Dial that ended with cause while the
// processes miss were missing: it names them, with the last error dialing
// each, and the connections dropped before the proofs.
func (cn *connector) missingError(cause error, miss []int) error {
	cn.mu.Lock()
	s := make([]string, len(miss))
	for k, i := range miss {
		s[k] = fmt.Sprintf("%d (%s)", i, cn.cfg.Addrs[i])
		if cn.dialErr[i] != nil {
			s[k] += ": " + cn.dialErr[i].Error()
		}
	}
	dropped := ""
	if cn.dropped > 0 {
		dropped = fmt.Sprintf("; dropped %d connection(s) that did not prove the secret, the last from %s", cn.dropped, cn.lastDrop)
	}
	cn.mu.Unlock()
	if errors.Is(cause, context.DeadlineExceeded) {
		cause = fmt.Errorf("no mesh within %v", cn.cfg.DialTimeout)
	}
	return fmt.Errorf("transport: process %d: %w; missing process %s%s", cn.cfg.Self, cause, strings.Join(s, ", process "), dropped)
}
