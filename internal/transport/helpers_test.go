package transport

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"
)

// listen opens n listeners on loopback port 0 and returns them with their
// addresses.
func listen(t testing.TB, n int) ([]net.Listener, []string) {
	t.Helper()
	lns := make([]net.Listener, n)
	addrs := make([]string, n)
	for i := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i], addrs[i] = ln, ln.Addr().String()
	}
	return lns, addrs
}

// testSettings are the settings of testConfig.
var testSettings = []Setting{{"binary", "0123456789abcdef"}, {"--workers", "2"}}

// testConfig is a fast configuration for tests.
func testConfig(i int, addrs []string, ln net.Listener) Config {
	return Config{
		Self: i, Addrs: addrs, Listener: ln,
		Settings: testSettings, Secret: "s3cret",
		Heartbeat: 50 * time.Millisecond, Timeout: 2 * time.Second, DialTimeout: 5 * time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// dialAll dials n processes concurrently; edit may change each config.
// It returns the networks and errors by index.
func dialAll(t testing.TB, n int, edit func(i int, c *Config)) ([]Network, []error) {
	t.Helper()
	lns, addrs := listen(t, n)
	nets := make([]Network, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		cfg := testConfig(i, addrs, lns[i])
		if edit != nil {
			edit(i, &cfg)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			nets[i], errs[i] = Dial(context.Background(), cfg)
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, nw := range nets {
			if nw != nil {
				nw.Close()
			}
		}
	})
	return nets, errs
}

// tcpMesh dials a mesh of n processes and fails the test if it fails.
func tcpMesh(t testing.TB, n int) []Network {
	t.Helper()
	nets, errs := dialAll(t, n, nil)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Dial(process %d) = %v", i, err)
		}
	}
	return nets
}

// localMesh returns NewLocal(n), closed at the end of the test.
func localMesh(t testing.TB, n int) []Network {
	nets := NewLocal(n)
	t.Cleanup(func() {
		for _, nw := range nets {
			nw.Close()
		}
	})
	return nets
}

// meshes are the implementations every behavioural test runs over.
var meshes = []struct {
	name string
	make func(t testing.TB, n int) []Network
}{
	{"tcp", tcpMesh},
	{"local", localMesh},
}

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// within waits for c to close, failing the test after d.
func within(t testing.TB, c <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(d):
		t.Fatalf("%s: not within %v", what, d)
	}
}
