package transport

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"
)

func TestConfigDefaults(t *testing.T) {
	c, err := Config{Addrs: []string{"a"}}.withDefaults()
	if err != nil {
		t.Fatalf("withDefaults() = %v", err)
	}
	if c.Credits != DefaultCredits || c.Heartbeat != DefaultHeartbeat || c.Timeout != DefaultTimeout ||
		c.DialTimeout != DefaultDialTimeout || c.Logger == nil {
		t.Errorf("withDefaults() = %+v; want the defaults", c)
	}
}

func TestConfigErrors(t *testing.T) {
	two := []string{"a", "b"}
	tests := []struct {
		c    Config
		want string
	}{
		{Config{}, "transport: config: 0 addresses; want 1 to 65536"},
		{Config{Addrs: two, Self: 2}, "transport: config: Self 2 out of range [0, 2)"},
		{Config{Addrs: two, Self: -1}, "transport: config: Self -1 out of range [0, 2)"},
		{Config{Addrs: two, Credits: -1}, "transport: config: Credits -1; want 1 to 65536"},
		{Config{Addrs: two, Heartbeat: time.Second, Timeout: time.Second}, "transport: config: Timeout 1s must exceed Heartbeat 1s"},
		{Config{Addrs: two, DialTimeout: -1}, "transport: config: negative DialTimeout -1ns"},
		{Config{Addrs: two, Settings: []Setting{{"x", strings.Repeat("f", MaxSettingsSize)}}}, "transport: config: settings of 65542 bytes encoded exceed 65535"},
		{Config{Addrs: two, Settings: []Setting{{"x", "1"}, {"x", "2"}}}, `transport: config: setting "x" given twice`},
		{Config{Addrs: two, TLS: &tls.Config{}}, "transport: config: TLS: no certificate (Certificates)"},
		{Config{Addrs: two, TLS: &tls.Config{Certificates: make([]tls.Certificate, 1)}}, "transport: config: TLS: no CA pool (RootCAs)"},
	}
	for _, tt := range tests {
		if _, err := tt.c.withDefaults(); err == nil || err.Error() != tt.want {
			t.Errorf("withDefaults(%.200v) = %v; want %v", tt.c, err, tt.want)
		}
		if _, err := Dial(context.Background(), tt.c); err == nil || err.Error() != tt.want {
			t.Errorf("Dial(%.200v) = %v; want %v", tt.c, err, tt.want)
		}
	}
}

// TestSingleProcess dials a mesh of one: no peers, and channels to itself
// work.
func TestSingleProcess(t *testing.T) {
	nw, err := Dial(context.Background(), Config{Addrs: []string{"127.0.0.1:0"}})
	if err != nil {
		t.Fatalf("Dial() = %v", err)
	}
	s, r := nw.Sender(1, 0), nw.Receiver(1, 0)
	if err := s.Send(append(s.Buffer(), "self"...)); err != nil {
		t.Fatalf("Send() = %v", err)
	}
	if p, err := r.Recv(); err != nil || string(p) != "self" {
		t.Errorf("Recv() = %q, %v; want \"self\"", p, err)
	}
	if err := nw.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	if _, err := r.Recv(); err != ErrClosed {
		t.Errorf("Recv() after Close = %v; want %v", err, ErrClosed)
	}
}

// TestDialTimeout dials a peer that never answers: Dial gives up after
// DialTimeout naming it.
func TestDialTimeout(t *testing.T) {
	lns, addrs := listen(t, 2)
	lns[1].Close()
	cfg := testConfig(0, addrs, lns[0])
	cfg.DialTimeout = 200 * time.Millisecond
	_, err := Dial(context.Background(), cfg)
	want := "transport: process 0: no mesh within 200ms; missing process 1 (" + addrs[1] + "): dial tcp"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Dial() = %v; want %s…", err, want)
	}
	if _, err := net.Dial("tcp", addrs[0]); err == nil {
		t.Errorf("the listener of a failed Dial still accepts")
	}
}

func TestSenderPanics(t *testing.T) {
	nw := NewLocal(2)[0]
	for _, f := range []func(){func() { nw.Sender(1, 2) }, func() { nw.Receiver(1, -1) }} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("Sender/Receiver of a process out of range did not panic")
				}
			}()
			f()
		}()
	}
}

func TestPayloadTooLarge(t *testing.T) {
	s := NewLocal(1)[0].Sender(1, 0)
	if err := s.Send(make([]byte, MaxPayload+1)); err == nil || !strings.Contains(err.Error(), "exceeds the maximum") {
		t.Errorf("Send(MaxPayload+1 bytes) = %v; want an error", err)
	}
}

func TestElasticConfigErrors(t *testing.T) {
	three := []string{"a:1", "b:1", "c:1"}
	tests := []struct {
		c    Config
		want string
	}{
		{Config{Addrs: three, Members: []int{0}}, "transport: config: Members and Join are for an elastic mesh (Elastic)"},
		{Config{Addrs: three, Join: []string{"a:1"}}, "transport: config: Members and Join are for an elastic mesh (Elastic)"},
		{Config{Addrs: three, Elastic: true, Members: []int{0}, Join: []string{"a:1"}},
			"transport: config: Members (processes started together) and Join (a process joining a running job) exclude each other"},
		{Config{Addrs: three, Elastic: true, Self: 1, Members: []int{0, 2}}, "transport: config: Members [0 2] do not hold Self 1"},
		{Config{Addrs: three, Elastic: true, Members: []int{0, 3}}, "transport: config: member 3 out of range [0, 3)"},
		{Config{Addrs: three, Elastic: true, Members: []int{0, 1, 0}}, "transport: config: member 0 given twice"},
		{Config{Addrs: three, Elastic: true, Join: []string{"a"}}, `transport: config: Join address "a": address a: missing port in address`},
	}
	for _, tt := range tests {
		if _, err := Dial(context.Background(), tt.c); err == nil || err.Error() != tt.want {
			t.Errorf("Dial(%+v) = %v; want %v", tt.c, err, tt.want)
		}
	}
}

// TestElasticSingleProcess starts an elastic mesh alone: its channels to
// itself work, and it is its only member.
func TestElasticSingleProcess(t *testing.T) {
	nw, err := Dial(context.Background(), Config{Addrs: []string{"127.0.0.1:0", "127.0.0.1:1"}, Elastic: true})
	if err != nil {
		t.Fatalf("Dial() = %v", err)
	}
	e := nw.(Elastic)
	if m := e.Members(); len(m) != 1 || m[0] != 0 {
		t.Errorf("Members() = %v; want [0]", m)
	}
	s, r := nw.Sender(1, 0), nw.Receiver(1, 0)
	if err := s.Send(append(s.Buffer(), "self"...)); err != nil {
		t.Fatalf("Send() = %v", err)
	}
	if p, err := r.Recv(); err != nil || string(p) != "self" {
		t.Errorf("Recv() = %q, %v", p, err)
	}
	if err := nw.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	if _, ok := <-e.Events(); ok {
		t.Error("Events() open after Close; want it closed")
	}
}
