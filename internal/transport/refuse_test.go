package transport

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMismatches dials two processes that prove the secret but run
// different jobs: Dial fails on both at once (well before DialTimeout),
// each naming the first setting that differs from its own side, and each
// logs it.
func TestMismatches(t *testing.T) {
	long := func(middle string) string {
		return strings.Repeat("/data/in/part-0001.jsonl,", 10) + middle + strings.Repeat(",/data/in/part-0099.jsonl", 10)
	}
	big := strings.Repeat("x", MaxSettingsSize-2-4-1-1) // and one more byte: the largest setting named "a"
	tests := []struct {
		name   string
		s0, s1 []Setting
		procs1 int
		want0  string // process 0's error after "runs another job: "
		want1  string // process 1's
	}{
		{"value", []Setting{{"binary", "b"}, {"--workers", "2"}}, []Setting{{"binary", "b"}, {"--workers", "3"}}, 2,
			"--workers is 2 here, 3 there", "--workers is 3 here, 2 there"},
		{"first of several", []Setting{{"binary", "b0"}, {"--workers", "2"}}, []Setting{{"binary", "b1"}, {"--workers", "3"}}, 2,
			"binary is b0 here, b1 there", "binary is b1 here, b0 there"},
		{"one-sided", []Setting{{"binary", "b"}}, []Setting{{"binary", "b"}, {"--checkpoint-every", "10"}}, 2,
			"--checkpoint-every is not set here, 10 there", "--checkpoint-every is 10 here, not set there"},
		{"long", []Setting{{"--input", long("/x/a.jsonl,/x/b.jsonl")}}, []Setting{{"--input", long("/x/b.jsonl,/x/a.jsonl")}}, 2,
			// 10 entries of 25 bytes and "/x/" in common: shown from 16
			// bytes before the first difference, for 64 bytes.
			"--input is …t-0001.jsonl,/x/a.jsonl,/x/b.jsonl,/data/in/part-0099.jsonl,/dat… (521 bytes) here, …t-0001.jsonl,/x/b.jsonl,/x/a.jsonl,/data/in/part-0099.jsonl,/dat… (521 bytes) there",
			"--input is …t-0001.jsonl,/x/b.jsonl,/x/a.jsonl,/data/in/part-0099.jsonl,/dat… (521 bytes) here, …t-0001.jsonl,/x/a.jsonl,/x/b.jsonl,/data/in/part-0099.jsonl,/dat… (521 bytes) there"},
		{"process count", testSettings, testSettings, 3, "process count is 2 here, 3 there", "process count is 3 here, 2 there"},
		{"near the limit", []Setting{{"a", big + "0"}}, []Setting{{"a", big + "1"}}, 2,
			"a is …" + big[:16] + "0 (65528 bytes) here, …" + big[:16] + "1 (65528 bytes) there",
			"a is …" + big[:16] + "1 (65528 bytes) here, …" + big[:16] + "0 (65528 bytes) there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := []*syncBuffer{{}, {}}
			var addrs []string
			start := time.Now()
			_, errs := dialAll(t, 2, func(i int, c *Config) {
				c.Logger = slog.New(slog.NewTextHandler(logs[i], nil))
				c.DialTimeout = 20 * time.Second
				c.Settings = tt.s0
				if i == 1 {
					c.Settings = tt.s1
					if tt.procs1 == 3 {
						c.Addrs = append(c.Addrs[:2:2], "127.0.0.1:1") // nobody listens there
					}
				}
				addrs = append(addrs, c.Addrs[i])
			})
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("Dial took %v; want the mismatch at once", took)
			}
			for i, want := range []string{tt.want0, tt.want1} {
				want = "transport: peer " + string(rune('1'-i)) + " (" + addrs[1-i] + ") runs another job: " + want
				var m *MismatchError
				if !errors.As(errs[i], &m) || errs[i].Error() != want {
					t.Errorf("process %d: Dial() = %v; want %s", i, errs[i], want)
				}
				if !strings.Contains(logs[i].String(), want) {
					t.Errorf("process %d logged %q; want a line saying %s", i, logs[i].String(), want)
				}
			}
		})
	}
}

// TestLargeSettings forms a mesh whose processes have settings as large
// as they may be.
func TestLargeSettings(t *testing.T) {
	big := []Setting{{"a", strings.Repeat("y", MaxSettingsSize-2-4-1)}}
	nets, errs := dialAll(t, 3, func(i int, c *Config) { c.Settings = big })
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Dial(process %d) = %v", i, err)
		}
	}
	exchange(t, nets, []uint32{1}, 10)
	closeAll(t, nets)
}

// TestWrongSecret dials two processes with different secrets: neither
// proves it to the other, so each drops the other's connections as a
// stranger's, logs why and waits; Dial fails at DialTimeout, saying why
// the peer was not admitted.
func TestWrongSecret(t *testing.T) {
	for _, secret := range []string{"guess", ""} {
		logs := []*syncBuffer{{}, {}}
		_, errs := dialAll(t, 2, func(i int, c *Config) {
			c.Logger = slog.New(slog.NewTextHandler(logs[i], nil))
			c.DialTimeout = time.Second
			if i == 1 {
				c.Secret = secret
			}
		})
		for i, want := range []string{"missing process 1", "missing process 0"} {
			if errs[i] == nil || !strings.Contains(errs[i].Error(), "no mesh within 1s") ||
				!strings.Contains(errs[i].Error(), want) || !strings.Contains(errs[i].Error(), "wrong secret") {
				t.Errorf("secret %q: process %d: Dial() = %v; want no mesh, %s, saying wrong secret", secret, i, errs[i], want)
			}
			if fatal(errs[i]) {
				t.Errorf("secret %q: process %d: Dial() = %#v; want no refusal of a peer that did not prove the secret", secret, i, errs[i])
			}
		}
		if log := logs[1].String(); !strings.Contains(log, "dropped a connection from 127.0.0.1:") || !strings.Contains(log, "wrong secret") {
			t.Errorf("secret %q: the acceptor logged %q; want the dropped connections and why", secret, log)
		}
		if log := logs[0].String(); !strings.Contains(log, "no handshake with process 1") || !strings.Contains(log, "wrong secret") {
			t.Errorf("secret %q: the dialer logged %q; want its failed handshakes and why", secret, log)
		}
	}
}

// TestRefusalReachesPeer has a fake peer that proves the secret but has
// other settings: the process refuses it with a reason that names the
// setting and both processes, and never the secret.
func TestRefusalReachesPeer(t *testing.T) {
	lns, addrs := listen(t, 2)
	lns[1].Close() // the fake process 1 dials, it does not listen
	cfg := testConfig(0, addrs, lns[0])
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
	fake := hello{Version: protoVersion, Index: 1, Processes: 2, Nonce: [16]byte{7}}
	reason, err := fakeShake(c, fake, cfg.Secret, []Setting{{"binary", "0123456789abcdef"}, {"--workers", "9"}})
	if err != nil {
		t.Fatalf("fake handshake: %v", err)
	}
	if want := "another job: --workers is 2 at process 0, 9 at process 1"; reason != want {
		t.Errorf("refusal = %q; want %q", reason, want)
	}
	if strings.Contains(reason, cfg.Secret) {
		t.Errorf("refusal %q contains the secret", reason)
	}
	c.Close()
	err = <-done
	wantErr := `transport: peer 1 (` + addrs[1] + `) runs another job: --workers is 2 here, 9 there`
	if err == nil || err.Error() != wantErr {
		t.Errorf("Dial() = %v; want %s", err, wantErr)
	}
	if !strings.Contains(logs.String(), wantErr) {
		t.Errorf("log %q does not say why", logs.String())
	}
}

// TestRefusedByPeer has a fake peer prove the secret, then refuse the
// process: Dial fails at once, with the peer's reason.
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
	typ, theirs, err := readMsg(c, &buf)
	if err != nil || typ != msgHello {
		t.Fatalf("readMsg() = %v, %v; want a hello", typ, err)
	}
	own := helloBody(hello{Version: protoVersion, Index: 1, Processes: 2, Nonce: [16]byte{3}})
	writeMsg(c, msgHello, own)
	writeMsg(c, msgProof, proof(cfg.Secret, own, theirs))
	writeMsg(c, msgSettings, settingsBody(cfg.Settings))
	writeMsg(c, msgRefuse, []byte("go away\n\x1b[31m"))
	err = <-done
	want := "transport: peer 1 (" + addrs[1] + ") refused us: go away??[31m"
	if err == nil || err.Error() != want {
		t.Errorf("Dial() = %v; want %s", err, want)
	}
}

// TestRefusedByStranger has something that is not process 1 answer at
// process 1's address and refuse process 0 before proving the secret:
// process 0 logs it and dials again, and meets the real process 1 once it
// listens there.
func TestRefusedByStranger(t *testing.T) {
	lns, addrs := listen(t, 2)
	logs := &syncBuffer{}
	cfg := testConfig(0, addrs, lns[0])
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	errs := make(chan error, 2)
	var nets [2]Network
	go func() {
		var err error
		nets[0], err = Dial(context.Background(), cfg)
		errs <- err
	}()
	for range 2 { // the stranger refuses two attempts
		c, err := lns[1].Accept()
		if err != nil {
			t.Fatal(err)
		}
		writeMsg(c, msgRefuse, []byte("wrong secret"))
		c.Close()
	}
	go func() {
		var err error
		nets[1], err = Dial(context.Background(), testConfig(1, addrs, lns[1]))
		errs <- err
	}()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("Dial() = %v; want a mesh once the real process 1 listens", err)
		}
	}
	defer closeAll(t, nets[:])
	exchange(t, nets[:], []uint32{1}, 20)
	want := "no handshake with process 1 at " + addrs[1] + ": it refused us: wrong secret; trying again"
	if !strings.Contains(logs.String(), want) {
		t.Errorf("log %q; want it to say %q", logs.String(), want)
	}
}

// TestLocalMismatches joins in-process networks whose processes give
// settings: alike, they join; when one differs, every process fails to
// join with a *MismatchError naming, from its own side, the first peer
// that differs and the setting, as Dial would; a process that gives none
// (Join) is compared with nobody.
func TestLocalMismatches(t *testing.T) {
	w2 := []Setting{{"binary", "b"}, {"--workers", "2"}}
	w3 := []Setting{{"binary", "b"}, {"--workers", "3"}}
	tests := []struct {
		name     string
		settings [][]Setting // nil: Join
		want     []string    // each process's error after "transport: peer ", "" for none
	}{
		{"alike", [][]Setting{w2, w2, w2}, []string{"", "", ""}},
		{"one without", [][]Setting{w2, nil, w3[:1]}, []string{
			"2 (local) runs another job: --workers is 2 here, not set there", "",
			"0 (local) runs another job: --workers is not set here, 2 there"}},
		{"the last differs", [][]Setting{w2, w2, w3}, []string{
			"2 (local) runs another job: --workers is 2 here, 3 there",
			"2 (local) runs another job: --workers is 2 here, 3 there",
			"0 (local) runs another job: --workers is 3 here, 2 there"}},
		{"the first differs", [][]Setting{w3, w2, w2}, []string{
			"1 (local) runs another job: --workers is 3 here, 2 there",
			"0 (local) runs another job: --workers is 2 here, 3 there",
			"0 (local) runs another job: --workers is 2 here, 3 there"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nets := localMesh(t, len(tt.settings))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			errs := make([]error, len(nets))
			var wg sync.WaitGroup
			for i, nw := range nets {
				l := nw.(*localNetwork)
				wg.Go(func() {
					if tt.settings[i] == nil {
						errs[i] = l.Join(ctx)
					} else {
						errs[i] = l.JoinWith(ctx, tt.settings[i])
					}
				})
			}
			wg.Wait()
			for i, want := range tt.want {
				var m *MismatchError
				switch {
				case want == "" && errs[i] != nil:
					t.Errorf("process %d: join = %v; want nil", i, errs[i])
				case want != "" && (!errors.As(errs[i], &m) || errs[i].Error() != "transport: peer "+want):
					t.Errorf("process %d: join = %v; want transport: peer %s", i, errs[i], want)
				}
			}
		})
	}
}

// Settings a Dial would refuse are refused by JoinWith too.
func TestLocalBadSettings(t *testing.T) {
	l := localMesh(t, 1)[0].(*localNetwork)
	err := l.JoinWith(context.Background(), []Setting{{"a", "1"}, {"a", "2"}})
	if err == nil || !strings.Contains(err.Error(), `setting "a" given twice`) {
		t.Errorf("JoinWith(a twice) = %v; want an error naming the setting", err)
	}
}
