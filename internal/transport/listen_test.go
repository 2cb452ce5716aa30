package transport

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"
)

// freePort returns a port of 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// otherLocalAddrs returns addresses of this machine other than 127.0.0.1
// that a connection reaches: 127.0.0.2 and the interfaces' addresses
// (not link-local ones, which need a zone). Each is checked against a
// listener on every interface, so that a refusal later means the
// address was not listened on, not that it is unreachable.
func otherLocalAddrs(t *testing.T) []netip.Addr {
	t.Helper()
	cands := []netip.Addr{netip.MustParseAddr("127.0.0.2")}
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ifs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && !p.Addr().IsLinkLocalUnicast() && p.Addr() != netip.MustParseAddr("127.0.0.1") {
			cands = append(cands, p.Addr())
		}
	}
	all, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	go func() {
		for {
			c, err := all.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := uint16(all.Addr().(*net.TCPAddr).Port)
	var ok []netip.Addr
	for _, a := range cands {
		if c, err := net.DialTimeout("tcp", netip.AddrPortFrom(a, port).String(), time.Second); err == nil {
			c.Close()
			ok = append(ok, a)
		}
	}
	return ok
}

// TestListensOnItsHostOnly dials process 1 of 2 at 127.0.0.1:P (by
// address) and at localhost:P (by name): while it waits for process 0,
// a connection to 127.0.0.1:P is accepted, and one to the same port on
// any other address of this machine is refused.
func TestListensOnItsHostOnly(t *testing.T) {
	others := otherLocalAddrs(t)
	if len(others) == 0 {
		t.Fatal("no local address but 127.0.0.1 accepts connections")
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		port := freePort(t)
		cfg := testConfig(1, []string{"127.0.0.1:" + freePort(t), net.JoinHostPort(host, port)}, nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := Dial(ctx, cfg); done <- err }()
		var c net.Conn
		var err error
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if c, err = net.Dial("tcp", "127.0.0.1:"+port); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Fatalf("%s: no listener at 127.0.0.1:%s: %v", host, port, err)
		}
		c.Close()
		for _, a := range others {
			addr := net.JoinHostPort(a.String(), port)
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				t.Errorf("%s: a connection to %s was accepted; want process 1 listening at 127.0.0.1 only", host, addr)
			}
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Dial() = %v; want it cancelled", host, err)
		}
	}
}

// TestListenNotHere gives a process an address that is not this
// machine's: Dial fails at once, naming it.
func TestListenNotHere(t *testing.T) {
	addrs := []string{"127.0.0.1:1", "203.0.113.7:7070"}
	_, err := Dial(context.Background(), testConfig(1, addrs, nil))
	want := "transport: process 1's address 203.0.113.7:7070 is not on this machine: 203.0.113.7 is not one of its addresses"
	if err == nil || err.Error() != want {
		t.Errorf("Dial() = %v; want %s", err, want)
	}
	ips := []netip.Addr{netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("fd00::9")}
	want = "transport: process 2's address node08:7070 is not on this machine: node08 resolves to 10.1.2.3, fd00::9, none of them an address of this machine"
	if got := notHere(2, "node08:7070", "node08", ips).Error(); got != want {
		t.Errorf("notHere() = %s; want %s", got, want)
	}
}

func TestLoopbackOnly(t *testing.T) {
	lo, lo2, ext := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.1.1"), netip.MustParseAddr("10.0.0.8")
	tests := []struct {
		bound []netip.Addr
		host  string
		addrs []string
		want  bool
	}{
		{[]netip.Addr{lo}, "127.0.0.1", []string{"127.0.0.1:1", "127.0.0.1:2"}, false},
		{[]netip.Addr{lo}, "localhost", []string{"localhost:1", "127.0.0.1:2", "[::1]:3"}, false},
		{[]netip.Addr{lo2}, "node08", []string{"node08:1", "node08:2"}, false},
		{[]netip.Addr{lo2}, "node08", []string{"node08:1", "node09:1"}, true},
		{[]netip.Addr{lo}, "127.0.0.1", []string{"127.0.0.1:1", "10.0.0.9:1"}, true},
		{[]netip.Addr{lo, ext}, "node08", []string{"node08:1", "node09:1"}, false},
		{[]netip.Addr{ext}, "10.0.0.8", []string{"10.0.0.8:1", "10.0.0.9:1"}, false},
	}
	for _, tt := range tests {
		if got := loopbackOnly(tt.bound, tt.host, tt.addrs); got != tt.want {
			t.Errorf("loopbackOnly(%v, %s, %v) = %v; want %v", tt.bound, tt.host, tt.addrs, got, tt.want)
		}
	}
}
