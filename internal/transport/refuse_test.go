package transport

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// TestRefusals dials two processes whose configurations disagree: Dial
// fails on both sides with an error that says why, and the refusing side
// logs why.
func TestRefusals(t *testing.T) {
	tests := []struct {
		name string
		edit func(c *Config) // applied to process 1
		want string
	}{
		{"secret", func(c *Config) { c.Secret = "guess" }, "wrong secret"},
		{"empty secret", func(c *Config) { c.Secret = "" }, "wrong secret"},
		{"fingerprint", func(c *Config) { c.Fingerprint = "plan-other" }, "job fingerprint differs"},
		{"process count", func(c *Config) {
			c.Addrs = append(c.Addrs[:2:2], "127.0.0.1:1") // nobody listens there
		}, "process count differs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := []*syncBuffer{{}, {}}
			_, errs := dialAll(t, 2, func(i int, c *Config) {
				c.Logger = slog.New(slog.NewTextHandler(logs[i], nil))
				if i == 1 {
					tt.edit(c)
				}
			})
			refusers := 0
			for i, err := range errs {
				var r *RefusedError
				if !errors.As(err, &r) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("process %d: Dial() = %v; want a refusal saying %q", i, err, tt.want)
					continue
				}
				if !r.ByPeer {
					refusers++
					if log := logs[i].String(); !strings.Contains(log, "refused peer") || !strings.Contains(log, tt.want) {
						t.Errorf("process %d refused but logged %q; want a line saying %q", i, log, tt.want)
					}
				}
			}
			if refusers == 0 {
				t.Errorf("Dial() = %v; want at least one side to refuse", errs)
			}
		})
	}
}

// TestRefusalReachesPeer has a fake peer with another fingerprint: the
// process refuses it with a reason worded for the peer, which never
// contains the secret.
func TestRefusalReachesPeer(t *testing.T) {
	lns, addrs := listen(t, 2)
	lns[1].Close() // the fake process 1 dials, it does not listen
	cfg := testConfig(0, addrs, lns[0])
	cfg.DialTimeout = 2 * time.Second
	logs := &syncBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	done := make(chan error, 1)
	go func() { _, err := Dial(context.Background(), cfg); done <- err }()

	// Process 0 accepts nobody (it is the lowest); it dials process 1.
	// So the fake listens at addrs[1] again.
	ln, err := net.Listen("tcp", addrs[1])
	if err != nil {
		t.Skipf("cannot listen again on %s: %v", addrs[1], err)
	}
	defer ln.Close()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fake := hello{Version: protoVersion, Index: 1, Processes: 2, Fingerprint: "other-plan"}
	writeMsg(c, msgHello, helloBody(fake))
	var buf []byte
	var reason string
	for {
		typ, body, err := readMsg(c, &buf)
		if err != nil {
			t.Fatalf("reading the refusal: %v", err)
		}
		if typ == msgRefuse {
			reason = string(body)
			break
		}
	}
	want := `job fingerprint differs (theirs "plan-1234567"…, ours "other-plan")`
	if reason != want {
		t.Errorf("refusal = %q; want %q", reason, want)
	}
	if strings.Contains(reason, cfg.Secret) {
		t.Errorf("refusal %q contains the secret", reason)
	}
	c.Close()
	err = <-done
	wantErr := `transport: refused peer 1 (` + addrs[1] + `): job fingerprint differs (theirs "other-plan", ours "plan-1234567"…)`
	if err == nil || err.Error() != wantErr {
		t.Errorf("Dial() = %v; want %s", err, wantErr)
	}
	if !strings.Contains(logs.String(), "job fingerprint differs") {
		t.Errorf("log %q does not say why", logs.String())
	}
}

// TestRefusedByPeer has a fake peer refuse the process: Dial reports the
// peer's reason.
func TestRefusedByPeer(t *testing.T) {
	lns, addrs := listen(t, 2)
	cfg := testConfig(0, addrs, lns[0])
	done := make(chan error, 1)
	go func() { _, err := Dial(context.Background(), cfg); done <- err }()
	c, err := lns[1].Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var buf []byte
	if typ, _, err := readMsg(c, &buf); err != nil || typ != msgHello {
		t.Fatalf("readMsg() = %v, %v; want a hello", typ, err)
	}
	writeMsg(c, msgRefuse, []byte("go away\n\x1b[31m"))
	err = <-done
	want := "transport: peer 1 (" + addrs[1] + ") refused us: go away??[31m"
	if err == nil || err.Error() != want {
		t.Errorf("Dial() = %v; want %s", err, want)
	}
}

// TestStrayConnection connects garbage to a process that waits for its
// peer: it is refused and logged, but the mesh still forms.
func TestStrayConnection(t *testing.T) {
	lns, addrs := listen(t, 2)
	c, err := net.Dial("tcp", addrs[1])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	writeMsg(c, msgHello, []byte("HTTP/1.0 200 OK"))
	logs := &syncBuffer{}
	errs := make(chan error, 2)
	want := "refused a connection from " + c.LocalAddr().String() + ": not a weir transport peer (bad magic)"
	for _, i := range []int{1, 0} { // the acceptor first, so it meets the stray first
		cfg := testConfig(i, addrs, lns[i])
		cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
		go func() {
			nw, err := Dial(context.Background(), cfg)
			if err == nil {
				defer nw.Close()
			}
			errs <- err
		}()
		for deadline := time.Now().Add(5 * time.Second); i == 1 && !strings.Contains(logs.String(), want); {
			if time.Now().After(deadline) {
				t.Fatalf("log = %q; want it to say %q", logs.String(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("Dial() = %v; want a mesh despite the stray connection", err)
		}
	}
}
