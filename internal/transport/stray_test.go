package transport

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// waitLog waits until the log says want, failing the test after d.
func waitLog(t *testing.T, log *syncBuffer, want string, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); !strings.Contains(log.String(), want); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("log = %q; want it to say %q", log.String(), want)
		}
	}
}

// TestStrayConnections has strangers connect to process 1 while it waits
// for process 0: one sends garbage, one a valid hello as process 0 with
// a proof of another secret, one says nothing. Each is logged with its
// address and why, and dropped; process 1 keeps accepting, and the real
// mesh forms (with one more silent stranger still connected) and carries
// data.
func TestStrayConnections(t *testing.T) {
	lns, addrs := listen(t, 2)
	logs := &syncBuffer{}
	var nets [2]Network
	errs := make(chan error, 2)
	dial := func(i int) {
		cfg := testConfig(i, addrs, lns[i])
		cfg.Timeout = time.Second // the silent stranger's handshake deadline
		cfg.DialTimeout = 20 * time.Second
		cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
		go func() {
			var err error
			nets[i], err = Dial(context.Background(), cfg)
			errs <- err
		}()
	}
	dial(1)
	stranger := func() net.Conn {
		c, err := net.Dial("tcp", addrs[1])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	silent := stranger()
	garbage := stranger()
	garbage.Write([]byte("GET / HTTP/1.1\r\nHost: weir\r\n\r\n"))
	guess := stranger()
	own := helloBody(hello{Version: protoVersion, Index: 0, Processes: 2, Nonce: [16]byte{5}})
	writeMsg(guess, msgHello, own)
	var buf []byte
	_, theirs, err := readMsg(guess, &buf)
	if err != nil {
		t.Fatalf("the stranger read no hello: %v", err)
	}
	writeMsg(guess, msgProof, proof("guess", own, theirs))

	const drop = "transport: process 1: dropped a connection from "
	waitLog(t, logs, drop+garbage.LocalAddr().String()+": not a weir transport peer: unknown message type 71", 5*time.Second)
	waitLog(t, logs, drop+guess.LocalAddr().String()+": wrong secret", 5*time.Second)
	waitLog(t, logs, drop+silent.LocalAddr().String()+": no hello within 1s", 5*time.Second)
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if !strings.Contains(line, "level=WARN") {
			t.Errorf("log line %q; want strangers logged as warnings", line)
		}
	}

	stranger() // silent while the real peer connects
	dial(0)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("Dial() = %v; want a mesh despite the strangers", err)
		}
	}
	exchange(t, nets[:], []uint32{1, 2}, 50)
	closeAll(t, nets[:])
}
