package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordingListener remembers the connections it accepted, so a test can
// cut them as a crash would: no close frame.
type recordingListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

func (l *recordingListener) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.(*net.TCPConn).SetLinger(0) // reset, not FIN
		c.Close()
	}
}

// TestLostPeer cuts the connections of process 2 (which accepts from 0
// and 1): the others fail within a few seconds naming it.
func TestLostPeer(t *testing.T) {
	tests := []struct {
		name  string
		cut   func(l *recordingListener)
		wants string
	}{
		// A reset usually reads as "connection lost", but the reader may
		// see the end of the stream first: either way the peer is named.
		{"reset", (*recordingListener).cut, ""},
		{"closed", func(l *recordingListener) {
			l.mu.Lock()
			defer l.mu.Unlock()
			for _, c := range l.conns {
				c.Close()
			}
		}, ""}, // a reset or "closed without a close frame", whichever comes first
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec *recordingListener
			nets, errs := dialAll(t, 3, func(i int, c *Config) {
				if i == 2 {
					rec = &recordingListener{Listener: c.Listener}
					c.Listener = rec
				}
			})
			for i, err := range errs {
				if err != nil {
					t.Fatalf("Dial(process %d) = %v", i, err)
				}
			}
			// Some traffic first, so frames are in flight.
			exchange(t, nets, []uint32{1}, 20)
			tt.cut(rec)
			for i := range 2 {
				within(t, nets[i].Done(), 3*time.Second, "Done of a lost peer")
				err := nets[i].Err()
				// Either directly, or in the close frame of the other
				// survivor, which failed first.
				var pe *PeerError
				if !errors.As(err, &pe) || !strings.Contains(err.Error(), "peer 2 ("+rec.Addr().String()+"): ") ||
					!strings.Contains(err.Error(), tt.wants) {
					t.Errorf("process %d: Err() = %v; want a PeerError naming peer 2 (%s) saying %q",
						i, err, rec.Addr(), tt.wants)
				}
				if err := nets[i].Close(); err != nets[i].Err() {
					t.Errorf("process %d: Close() = %v; want %v", i, err, nets[i].Err())
				}
			}
		})
	}
}

// fakePeer accepts one connection on ln and handshakes as process 1 of 2
// with cfg's settings and secret, then returns the connection.
func fakePeer(t *testing.T, ln net.Listener, cfg Config) net.Conn {
	t.Helper()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	h := hello{Version: protoVersion, Index: 1, Processes: 2, Nonce: [16]byte{1}}
	if r, err := fakeShake(c, h, cfg.Secret, cfg.Settings); r != "" || err != nil {
		t.Fatalf("handshake = %q, %v", r, err)
	}
	return c
}

// fakeShake runs our side of a handshake on c as h with secret and
// settings. It returns the refusal of the other side, if any.
func fakeShake(c net.Conn, h hello, secret string, settings []Setting) (string, error) {
	own := helloBody(h)
	var buf []byte
	writeMsg(c, msgHello, own)
	_, theirs, err := readMsg(c, &buf)
	if err != nil {
		return "", err
	}
	theirs = append([]byte(nil), theirs...)
	writeMsg(c, msgProof, proof(secret, own, theirs))
	writeMsg(c, msgSettings, settingsBody(settings))
	for _, want := range []msgType{msgProof, msgSettings, msgOK} {
		typ, body, err := readMsg(c, &buf)
		switch {
		case err != nil:
			return "", err
		case typ == msgRefuse:
			return string(body), nil
		case typ != want:
			return "", fmt.Errorf("%v where %v was due", typ, want)
		}
	}
	return "", writeMsg(c, msgOK, nil)
}

// TestDuplicatePeer has two connections claim to be process 0: the
// second is refused, and Dial fails saying why.
func TestDuplicatePeer(t *testing.T) {
	lns, addrs := listen(t, 3)
	cfg := testConfig(2, addrs, lns[2])
	done := make(chan error, 1)
	go func() { _, err := Dial(context.Background(), cfg); done <- err }()
	h := hello{Version: protoVersion, Index: 0, Processes: 3}
	for k, want := range []string{"", "process 0 is already connected"} {
		c, err := net.Dial("tcp", addrs[2])
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		h.Nonce[0] = byte(k + 1)
		if r, err := fakeShake(c, h, cfg.Secret, cfg.Settings); r != want || err != nil {
			t.Errorf("handshake #%d = %q, %v; want %q", k, r, err, want)
		}
		if k == 1 {
			c.Close() // ends the refuser's linger
		}
	}
	if err := <-done; err == nil || !strings.HasSuffix(err.Error(), "process 0 is already connected") {
		t.Errorf("Dial() = %v; want a refusal of the duplicate", err)
	}
}

// TestSilentPeer has a fake peer handshake and then say nothing: the
// process fails after Timeout for want of heartbeats.
func TestSilentPeer(t *testing.T) {
	lns, addrs := listen(t, 2)
	cfg := testConfig(0, addrs, lns[0])
	cfg.Timeout = 300 * time.Millisecond
	type result struct {
		nw  Network
		err error
	}
	done := make(chan result, 1)
	go func() { nw, err := Dial(context.Background(), cfg); done <- result{nw, err} }()
	c := fakePeer(t, lns[1], cfg)
	defer c.Close()
	r := <-done
	if r.err != nil {
		t.Fatalf("Dial() = %v", r.err)
	}
	defer r.nw.Close()
	start := time.Now()
	within(t, r.nw.Done(), 3*time.Second, "Done of a silent peer")
	if d := time.Since(start); d < cfg.Timeout/2 {
		t.Errorf("failed after %v; want about %v", d, cfg.Timeout)
	}
	want := "transport: peer 1 (" + addrs[1] + "): no heartbeat for 300ms"
	if err := r.nw.Err(); err == nil || err.Error() != want {
		t.Errorf("Err() = %v; want %s", err, want)
	}
}

// TestProtocolErrors has a fake peer send frames that break the protocol:
// the network fails naming the peer and what was wrong.
func TestProtocolErrors(t *testing.T) {
	tests := []struct {
		name   string
		frames []Frame
		want   string
	}{
		{"sequence gap", []Frame{
			{Kind: KindData, Channel: 7, Source: 1, Target: 0, Seq: 1},
			{Kind: KindData, Channel: 7, Source: 1, Target: 0, Seq: 3},
		}, "channel 7: frame 3 where 2 was due"},
		{"repeat", []Frame{
			{Kind: KindData, Channel: 7, Source: 1, Target: 0, Seq: 1},
			{Kind: KindData, Channel: 7, Source: 1, Target: 0, Seq: 1},
		}, "channel 7: frame 1 where 2 was due"},
		{"wrong source", []Frame{{Kind: KindData, Channel: 7, Source: 0, Target: 0, Seq: 1}},
			"data frame from process 0 to 0"},
		{"too many credits", []Frame{{Kind: KindCredit, Channel: 2, Source: 1, Target: 0, Credits: 1}},
			"channel 2: 1 credits granted on top of 16 exceed the 16 per channel"},
		{"unknown kind", []Frame{{Kind: 9, Source: 1}}, "frame: unknown kind 9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lns, addrs := listen(t, 2)
			cfg := testConfig(0, addrs, lns[0])
			done := make(chan Network, 1)
			go func() { nw, _ := Dial(context.Background(), cfg); done <- nw }()
			c := fakePeer(t, lns[1], cfg)
			defer c.Close()
			nw := <-done
			if nw == nil {
				t.Fatal("Dial failed")
			}
			defer nw.Close()
			var b []byte
			for _, f := range tt.frames {
				b = AppendFrame(b, f)
			}
			c.Write(b)
			within(t, nw.Done(), 3*time.Second, "Done after a protocol error")
			want := "transport: peer 1 (" + addrs[1] + "): " + tt.want
			if err := nw.Err(); err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Err() = %v; want %s", err, want)
			}
		})
	}
}

// TestAbortReason has a fake peer fail and say why in its close frame:
// the process fails with that reason.
func TestAbortReason(t *testing.T) {
	lns, addrs := listen(t, 2)
	cfg := testConfig(0, addrs, lns[0])
	done := make(chan Network, 1)
	go func() { nw, _ := Dial(context.Background(), cfg); done <- nw }()
	c := fakePeer(t, lns[1], cfg)
	defer c.Close()
	nw := <-done
	if nw == nil {
		t.Fatal("Dial failed")
	}
	defer nw.Close()
	c.Write(AppendFrame(nil, Frame{Kind: KindClose, Source: 1, Payload: []byte("transport: peer 5 (x): gone\n")}))
	within(t, nw.Done(), 3*time.Second, "Done after an abort")
	want := "transport: peer 1 (" + addrs[1] + "): failed: transport: peer 5 (x): gone?"
	if err := nw.Err(); err == nil || err.Error() != want || !errors.Is(err, ErrPeerAborted) {
		t.Errorf("Err() = %v; want %s", err, want)
	}
}
