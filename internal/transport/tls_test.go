package transport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // its certificate, PEM
}

// serials numbers the certificates of a test run.
var serials atomic.Int64

func serial() *big.Int { return big.NewInt(serials.Add(1)) }

// newCA makes a CA and writes its certificate into dir.
func newCA(t *testing.T, dir, name string) testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	file := filepath.Join(dir, name+".pem")
	writePEM(t, file, "CERTIFICATE", der)
	return testCA{cert, key, file}
}

// issue makes a certificate of the CA for a process, valid until
// notAfter, and writes it and its key into dir. Its name matches no
// address: host names are not checked.
func (ca testCA) issue(t *testing.T, dir, name string, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name + ".weir.invalid"},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", kder)
	return certFile, keyFile
}

func writePEM(t *testing.T, file, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// loadTLS issues a certificate of ca for name and loads it with LoadTLS.
func loadTLS(t *testing.T, dir string, ca testCA, name string) *tls.Config {
	t.Helper()
	cert, key := ca.issue(t, dir, name, time.Now().Add(time.Hour))
	c, err := LoadTLS(cert, key, ca.file)
	if err != nil {
		t.Fatalf("LoadTLS(%s) = %v", name, err)
	}
	return c
}

// TestTLSMesh forms a mesh of three processes over mutual TLS: every
// connection is TLS 1.3 with a verified certificate on both sides, and
// carries data.
func TestTLSMesh(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t, dir, "ca")
	nets, errs := dialAll(t, 3, func(i int, c *Config) {
		c.TLS = loadTLS(t, dir, ca, "p"+string(rune('0'+i)))
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Dial(process %d) = %v", i, err)
		}
	}
	for i, nw := range nets {
		for j, p := range nw.(*tcpNetwork).peers {
			if p == nil {
				continue
			}
			tc, ok := p.conn.(*tls.Conn)
			if !ok {
				t.Fatalf("process %d's connection to %d is a %T; want TLS", i, j, p.conn)
			}
			st := tc.ConnectionState()
			want := "p" + string(rune('0'+j))
			if st.Version != tls.VersionTLS13 || len(st.PeerCertificates) == 0 || st.PeerCertificates[0].Subject.CommonName != want {
				t.Errorf("process %d's connection to %d: version %x, %d peer certificates; want TLS 1.3 and %s's certificate",
					i, j, st.Version, len(st.PeerCertificates), want)
			}
		}
	}
	exchange(t, nets, []uint32{0, 9}, 100)
	closeAll(t, nets)
}

// TestTLSRefusals pairs a process with one it must not admit: a
// certificate of another CA (dialing or accepting), no TLS, or the right
// CA but another secret. The mesh does not form, no peer is reported as
// disagreeing, and the process logs why it dropped the connections.
func TestTLSRefusals(t *testing.T) {
	dir := t.TempDir()
	ca, other := newCA(t, dir, "ca"), newCA(t, dir, "other")
	tests := []struct {
		name     string
		intruder int // its index; the other process is the job's
		edit     func(c *Config)
		logs     []string // what the job's process logs
	}{
		// The intruder refuses our certificate first.
		{"other CA dials", 0, func(c *Config) { c.TLS = loadTLS(t, dir, other, "i0") },
			[]string{"dropped a connection from 127.0.0.1:", "TLS handshake: remote error: tls: bad certificate"}},
		{"other CA accepts", 1, func(c *Config) { c.TLS = loadTLS(t, dir, other, "i1") },
			[]string{"no handshake with process 1 at 127.0.0.1:", "certificate signed by unknown authority; trying again"}},
		{"other CA dials, trusting ours", 0, func(c *Config) {
			c.TLS = loadTLS(t, dir, other, "i2")
			c.TLS.RootCAs.AddCert(ca.cert)
		}, []string{"dropped a connection from 127.0.0.1:", "TLS handshake: tls: failed to verify certificate: x509: certificate signed by unknown authority"}},
		{"other CA accepts, trusting ours", 1, func(c *Config) {
			c.TLS = loadTLS(t, dir, other, "i3")
			c.TLS.RootCAs.AddCert(ca.cert)
		}, []string{"no handshake with process 1 at 127.0.0.1:", "certificate signed by unknown authority; trying again"}},
		{"no TLS", 0, func(c *Config) { c.TLS = nil },
			[]string{"dropped a connection from 127.0.0.1:", "first record does not look like a TLS handshake"}},
		{"another secret", 1, func(c *Config) { c.Secret = "guess" },
			[]string{"no handshake with process 1 at 127.0.0.1:", "wrong secret"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := []*syncBuffer{{}, {}}
			_, errs := dialAll(t, 2, func(i int, c *Config) {
				c.Logger = slog.New(slog.NewTextHandler(logs[i], nil))
				c.DialTimeout = time.Second
				c.TLS = loadTLS(t, dir, ca, "p"+string(rune('0'+i)))
				if i == tt.intruder {
					tt.edit(c)
				}
			})
			for i, err := range errs {
				if err == nil || fatal(err) || !strings.Contains(err.Error(), "no mesh within 1s") {
					t.Errorf("process %d: Dial() = %v; want no mesh", i, err)
				}
			}
			job := 1 - tt.intruder
			for _, want := range tt.logs {
				if log := logs[job].String(); !strings.Contains(log, want) {
					t.Errorf("the job's process %d logged %q; want it to say %q", job, log, want)
				}
			}
		})
	}
}

// TestLoadTLSErrors gives LoadTLS files it must refuse: each error names
// the file at fault.
func TestLoadTLSErrors(t *testing.T) {
	dir := t.TempDir()
	ca, other := newCA(t, dir, "ca"), newCA(t, dir, "other")
	cert, key := ca.issue(t, dir, "good", time.Now().Add(time.Hour))
	cert2, key2 := ca.issue(t, dir, "second", time.Now().Add(time.Hour))
	expired, expiredKey := ca.issue(t, dir, "expired", time.Now().Add(-time.Hour))
	stranger, strangerKey := other.issue(t, dir, "stranger", time.Now().Add(time.Hour))
	text := filepath.Join(dir, "text.pem")
	os.WriteFile(text, []byte("not a certificate\n"), 0o600)
	missing := filepath.Join(dir, "missing.pem")
	if _, err := LoadTLS(cert, key, ca.file); err != nil {
		t.Fatalf("LoadTLS(good) = %v", err)
	}
	tests := []struct {
		cert, key, ca string
		want          []string
	}{
		{missing, key, ca.file, []string{"TLS certificate: open " + missing + ": no such file"}},
		{cert, missing, ca.file, []string{"TLS key: open " + missing + ": no such file"}},
		{cert, key, missing, []string{"TLS CA: open " + missing + ": no such file"}},
		{text, key, ca.file, []string{"TLS certificate " + text + ": no PEM certificate in it"}},
		{key, key, ca.file, []string{"TLS certificate " + key + `: a PEM "PRIVATE KEY" block where certificates were due`}},
		{cert, text, ca.file, []string{"TLS key " + text + ": no PEM private key in it"}},
		{cert, key, text, []string{"TLS CA " + text + ": no PEM certificate in it"}},
		{cert, key2, ca.file, []string{"TLS key " + key2 + " and certificate " + cert + ": ", "private key does not match public key"}},
		{cert2, key2, other.file, []string{"TLS certificate " + cert2 + " does not chain to the CA in " + other.file, "unknown authority"}},
		{stranger, strangerKey, ca.file, []string{"TLS certificate " + stranger + " does not chain to the CA in " + ca.file}},
		{expired, expiredKey, ca.file, []string{"TLS certificate " + expired + " expired at "}},
	}
	for _, tt := range tests {
		_, err := LoadTLS(tt.cert, tt.key, tt.ca)
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("LoadTLS(%s, %s, %s) = %v; want it to say %q", filepath.Base(tt.cert), filepath.Base(tt.key), filepath.Base(tt.ca), err, w)
			}
		}
	}
}
