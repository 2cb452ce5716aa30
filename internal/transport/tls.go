package transport

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

// checkTLS checks that c can authenticate this process and its peers.
func checkTLS(c *tls.Config) error {
	switch {
	case len(c.Certificates) == 0:
		return errors.New("no certificate (Certificates)")
	case c.RootCAs == nil:
		return errors.New("no CA pool (RootCAs)")
	}
	return nil
}

// serverTLS is the configuration for the connections a process accepts:
// TLS 1.3, a client certificate required and verified against the CA.
func serverTLS(c *tls.Config) *tls.Config {
	s := c.Clone()
	s.MinVersion = tls.VersionTLS13
	s.ClientAuth = tls.RequireAndVerifyClientCert
	if s.ClientCAs == nil {
		s.ClientCAs = c.RootCAs
	}
	return s
}

// clientTLS is the configuration for the connections a process dials:
// TLS 1.3, our certificate presented, the server's verified against the
// CA. Host names
// are not verified (processes are addressed by IPs and pod names that
// certificates rarely list); a VerifyConnection of c's runs after the
// chain checked out.
func clientTLS(c *tls.Config) *tls.Config {
	cl := c.Clone()
	cl.MinVersion = tls.VersionTLS13
	if cl.GetClientCertificate == nil {
		// Present our certificate even to a server that asks for another
		// CA's, so that it can say which certificate it refused.
		cert := &c.Certificates[0]
		cl.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	cl.InsecureSkipVerify = true // the chain is verified below
	roots, then := c.RootCAs, c.VerifyConnection
	cl.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: the peer sent no certificate")
		}
		opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool(),
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		for _, ic := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(ic)
		}
		if _, err := cs.PeerCertificates[0].Verify(opts); err != nil {
			return fmt.Errorf("tls: peer certificate: %w", err)
		}
		if then != nil {
			return then(cs)
		}
		return nil
	}
	return cl
}

// LoadTLS reads the TLS configuration of Config.TLS from PEM files: this
// process's certificate (with any intermediates after it) and its private
// key, and the CA certificates that every peer's certificate must chain
// to. It refuses a file that cannot be read or holds no valid PEM
// certificate or key, a key that is not the certificate's, and a
// certificate that is not valid now or does not chain to the CA, with an
// error that names the file.
func LoadTLS(certFile, keyFile, caFile string) (*tls.Config, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS key: %w", err)
	}
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("TLS CA: %w", err)
	}
	chain, err := parseCerts(certPEM)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s: %w", certFile, err)
	}
	cas, err := parseCerts(caPEM)
	if err != nil {
		return nil, fmt.Errorf("TLS CA %s: %w", caFile, err)
	}
	if !hasPrivateKey(keyPEM) {
		return nil, fmt.Errorf("TLS key %s: no PEM private key in it", keyFile)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("TLS key %s and certificate %s: %w", keyFile, certFile, err)
	}
	leaf := chain[0]
	if now := time.Now(); now.After(leaf.NotAfter) {
		return nil, fmt.Errorf("TLS certificate %s expired at %v", certFile, leaf.NotAfter.UTC())
	} else if now.Before(leaf.NotBefore) {
		return nil, fmt.Errorf("TLS certificate %s is not valid before %v", certFile, leaf.NotBefore.UTC())
	}
	pool := x509.NewCertPool()
	for _, c := range cas {
		pool.AddCert(c)
	}
	opts := x509.VerifyOptions{Roots: pool, Intermediates: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}
	for _, c := range chain[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := leaf.Verify(opts); err != nil {
		return nil, fmt.Errorf("TLS certificate %s does not chain to the CA in %s: %w", certFile, caFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool}, nil
}

// parseCerts parses the PEM certificates in b: at least one, and nothing
// but certificates.
func parseCerts(b []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("a PEM %q block where certificates were due", blk.Type)
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM certificate in it")
	}
	return certs, nil
}

// hasPrivateKey reports whether b holds a PEM private key block.
func hasPrivateKey(b []byte) bool {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return false
		}
		if strings.HasSuffix(blk.Type, "PRIVATE KEY") {
			return true
		}
	}
}

// coalescer sits under a TLS connection and, while held, gathers what
// TLS writes into one write: crypto/tls writes each record (16 KiB at
// most) with a system call of its own, so a batch of frames would cost
// one call per record.
type coalescer struct {
	net.Conn
	mu   sync.Mutex
	hold bool
	buf  []byte
}

func (c *coalescer) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.hold {
		return c.Conn.Write(b)
	}
	c.buf = append(c.buf, b...)
	return len(b), nil
}

// gather holds the writes until flush.
func (c *coalescer) gather() {
	c.mu.Lock()
	c.hold = true
	c.mu.Unlock()
}

// flush writes what was gathered and stops holding writes.
func (c *coalescer) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hold = false
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	c.buf = c.buf[:0]
	if cap(c.buf) > keepGathered {
		c.buf = nil // after a large payload
	}
	return err
}

// keepGathered is the most buffer a coalescer keeps between batches.
const keepGathered = 2 * maxWrite

// coalescerOf returns the coalescer under a TLS connection, or nil.
func coalescerOf(c net.Conn) *coalescer {
	if tc, ok := c.(*tls.Conn); ok {
		co, _ := tc.NetConn().(*coalescer)
		return co
	}
	return nil
}
