package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"time"
)

// listenAt opens the listeners of process self at its address addr: one per
// address of this machine that addr's host resolves to (a name may
// resolve to an IPv4 and an IPv6 address), never every interface, unless
// the host is empty or unspecified (0.0.0.0, ::), which asks for that. A
// host that resolves to no address of this machine is an error naming
// it. A name that does not resolve (yet: a pod's DNS record may come
// late) is looked up again until ctx ends.
func listenAt(ctx context.Context, self int, addrs []string, log *slog.Logger) ([]net.Listener, error) {
	addr := addrs[self]
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("transport: process %d's address %q: %w", self, addr, err)
	}
	if ip, err := netip.ParseAddr(host); host == "" || err == nil && ip.IsUnspecified() {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("transport: process %d: %w", self, err)
		}
		return []net.Listener{ln}, nil
	}
	ips, err := resolve(ctx, host, log)
	if err != nil {
		return nil, fmt.Errorf("transport: process %d's address %s: %w", self, addr, err)
	}
	var lns []net.Listener
	var bound []netip.Addr
	for _, ip := range ips {
		ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), port))
		if errors.Is(err, syscall.EADDRNOTAVAIL) {
			continue // not an address of this machine
		}
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("transport: process %d: %w", self, err)
		}
		lns, bound = append(lns, ln), append(bound, ip)
	}
	if len(lns) == 0 {
		return nil, notHere(self, addr, host, ips)
	}
	if loopbackOnly(bound, host, addrs) {
		log.Warn(fmt.Sprintf("transport: process %d listens at %s on loopback only (%s), which processes on other machines cannot reach; give it an address they reach it at",
			self, addr, joinAddrs(bound)))
	}
	return lns, nil
}

// resolve returns the addresses of host (an IP address or a name),
// without duplicates, looking a name up again until ctx ends.
func resolve(ctx context.Context, host string, log *slog.Logger) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip.Unmap()}, nil
	}
	for warned := false; ; {
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err == nil && len(ips) > 0 {
			for i := range ips {
				ips[i] = ips[i].Unmap()
			}
			slices.SortFunc(ips, func(a, b netip.Addr) int { return a.Compare(b) })
			return slices.Compact(ips), nil
		}
		if err == nil {
			err = errors.New("no address")
		}
		if !warned {
			log.Warn(fmt.Sprintf("transport: cannot resolve %s (%v); trying again", host, err))
			warned = true
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// notHere is the error of a process whose address is not on this machine.
func notHere(self int, addr, host string, ips []netip.Addr) error {
	if len(ips) == 1 && ips[0].String() == host {
		return fmt.Errorf("transport: process %d's address %s is not on this machine: %s is not one of its addresses", self, addr, host)
	}
	return fmt.Errorf("transport: process %d's address %s is not on this machine: %s resolves to %s, none of them an address of this machine",
		self, addr, host, joinAddrs(ips))
}

func joinAddrs(ips []netip.Addr) string {
	s := make([]string, len(ips))
	for i, ip := range ips {
		s[i] = ip.String()
	}
	return strings.Join(s, ", ")
}

// loopbackOnly reports whether a process bound to the addresses bound
// only (its host being host) is out of reach of some peer: all of bound
// are loopback addresses, and a peer's host is neither the same name nor
// a loopback address. A host name that /etc/hosts maps to 127.0.1.1 does
// that, while the peers on other machines reach it by DNS.
func loopbackOnly(bound []netip.Addr, host string, addrs []string) bool {
	for _, ip := range bound {
		if !ip.IsLoopback() {
			return false
		}
	}
	for _, a := range addrs {
		h, _, err := net.SplitHostPort(a)
		if err != nil || h == host || h == "localhost" {
			continue
		}
		if ip, err := netip.ParseAddr(h); err == nil && ip.IsLoopback() {
			continue
		}
		return true
	}
	return false
}
