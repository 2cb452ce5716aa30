package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCerts are the PEM files of a CA made for one test and of a
// certificate it issued.
type testCerts struct {
	ca, cert, key string
}

// makeCerts makes a CA named name and a certificate of it for the job's
// processes (serverAuth and clientAuth) in dir.
func makeCerts(t *testing.T, dir, name string) testCerts {
	t.Helper()
	write := func(file, typ string, der []byte) string {
		path := filepath.Join(dir, file)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name + " process"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	return testCerts{write(name+"-ca.pem", "CERTIFICATE", caDER), write(name+".crt", "CERTIFICATE", der), write(name+".key", "PRIVATE KEY", kder)}
}

func (c testCerts) flags() []string {
	return []string{"--tls-cert", c.cert, "--tls-key", c.key, "--tls-ca", c.ca}
}

// Word count over 3 processes on a mutual TLS mesh (launch passes the
// flags to every process) equals the reference.
func TestLaunchTLS(t *testing.T) {
	dir := t.TempDir()
	certs := makeCerts(t, dir, "job")
	var text strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&text, "t%d s%d the\n", i%501, i%11)
	}
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "words.csv")
	writeFile(t, in, text.String())
	args := append([]string{"launch", "-n", "3", "--", "run", "wordcount", "--input", in, "--out", out, "--workers", "1"}, certs.flags()...)
	r := mustSucceed(t, args...)
	for i := range 3 {
		prefix := fmt.Sprintf("[%d] weir: process %d of 3", i, i)
		found := false
		for _, line := range strings.Split(r.stderr, "\n") {
			found = found || strings.HasPrefix(line, prefix) && strings.HasSuffix(line, ", over mutual TLS")
		}
		if !found {
			t.Errorf("stderr does not show process %d starting over TLS:\n%s", i, r.stderr)
		}
	}
	if got, want := readFile(t, out), wordcountCSV(text.String()); got != want {
		t.Errorf("output differs from the reference\n%s", firstDiff(got, want))
	}
}

// A process whose certificate is of another CA does not join: both fail
// at --mesh-timeout, and the job's process logs why it dropped the
// connections.
func TestTLSOtherCAProcess(t *testing.T) {
	dir := t.TempDir()
	job, other := makeCerts(t, dir, "job"), makeCerts(t, dir, "other")
	args := []string{"run", "ysb", "--events", "100000", "--workers", "1", "--mesh-timeout", "2s"}
	stderr, _ := runPair(t, [2]string{weirBin, weirBin}, [2]string{"same", "same"},
		[2][]string{append(args, job.flags()...), append(args, other.tls(job.ca)...)})
	if !strings.Contains(stderr[0], "no handshake with process 1") || !strings.Contains(stderr[0], "certificate signed by unknown authority") {
		t.Errorf("process 0: stderr does not say why it dropped process 1:\n%s", stderr[0])
	}
	for i := range 2 {
		if !strings.Contains(stderr[i], "no mesh within 2s") {
			t.Errorf("process %d: stderr does not say the mesh did not form:\n%s", i, stderr[i])
		}
	}
}

// tls is the flags of c's certificate, trusting the CA in ca as well as
// its own (so that its own certificate is accepted at start).
func (c testCerts) tls(ca string) []string {
	both := c.ca + ".both"
	a, _ := os.ReadFile(c.ca)
	b, _ := os.ReadFile(ca)
	os.WriteFile(both, append(a, b...), 0o600)
	return []string{"--tls-cert", c.cert, "--tls-key", c.key, "--tls-ca", both}
}

// The TLS flags go together, and a file that is missing or holds no
// certificate is refused at start, named.
func TestTLSFlagErrors(t *testing.T) {
	dir := t.TempDir()
	certs := makeCerts(t, dir, "job")
	junk := filepath.Join(dir, "junk.pem")
	writeFile(t, junk, "junk\n")
	missing := filepath.Join(dir, "missing.pem")
	run := []string{"run", "wordcount", "--input", junk, "--out", filepath.Join(dir, "out.csv")}
	tests := []struct {
		flags []string
		want  string
	}{
		{[]string{"--tls-cert", certs.cert}, "--tls-cert, --tls-key and --tls-ca go together: --tls-cert without --tls-key and --tls-ca"},
		{[]string{"--tls-cert", certs.cert, "--tls-ca", certs.ca}, "go together: --tls-cert and --tls-ca without --tls-key"},
		{[]string{"--tls-cert", missing, "--tls-key", certs.key, "--tls-ca", certs.ca}, "TLS certificate: open " + missing + ": no such file"},
		{[]string{"--tls-cert", certs.cert, "--tls-key", junk, "--tls-ca", certs.ca}, "TLS key " + junk + ": no PEM private key in it"},
		{[]string{"--tls-cert", certs.cert, "--tls-key", certs.key, "--tls-ca", junk}, "TLS CA " + junk + ": no PEM certificate in it"},
	}
	for _, tt := range tests {
		mustFail(t, append(append([]string(nil), run...), tt.flags...), tt.want)
		mustFail(t, append([]string{"bench", "transport"}, tt.flags...), tt.want)
	}
}
