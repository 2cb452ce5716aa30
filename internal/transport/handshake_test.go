package transport

import (
	"bytes"
	"strings"
	"testing"
)

var sampleHello = hello{Version: protoVersion, Index: 1, Processes: 3, Fingerprint: "plan-abc", Nonce: [16]byte{1, 2, 3}}

func TestHelloRoundTrip(t *testing.T) {
	for _, h := range []hello{sampleHello, {Version: protoVersion}, {Version: protoVersion, Index: 65535, Processes: 0, Fingerprint: strings.Repeat("f", maxFingerprint)}} {
		msg := appendMsg(nil, msgHello, helloBody(h))
		typ, body, n, err := splitMsg(msg)
		if err != nil || typ != msgHello || n != len(msg) {
			t.Fatalf("splitMsg(hello) = %v, %d, %v; want hello, %d, nil", typ, n, err, len(msg))
		}
		got, err := decodeHello(body)
		if err != nil || got != h {
			t.Errorf("decodeHello(%q) = %+v, %v; want %+v", body, got, err, h)
		}
	}
}

func TestSplitMsg(t *testing.T) {
	tests := []struct {
		in      []byte
		typ     msgType
		n       int
		wantErr string
	}{
		{nil, 0, 0, ""},
		{[]byte{1, 0}, 0, 0, ""},
		{[]byte{1, 0, 2, 'a'}, 1, 0, ""}, // incomplete
		{[]byte{3, 0, 0, 9}, msgOK, 3, ""},
		{[]byte{4, 0, 2, 'n', 'o'}, msgRefuse, 5, ""},
		{[]byte{0, 0, 0}, 0, 0, "transport: handshake: unknown message type 0"},
		{[]byte{'G', 'E', 'T'}, 0, 0, "transport: handshake: unknown message type 71"},
		{[]byte{1, 0xff, 0xff}, 0, 0, "transport: handshake: hello of 65535 bytes exceeds 2048"},
	}
	for _, tt := range tests {
		typ, _, n, err := splitMsg(tt.in)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("splitMsg(%q) = %v; want %v", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || n != tt.n || (n > 0 && typ != tt.typ) {
			t.Errorf("splitMsg(%q) = %v, %d, %v; want %v, %d, nil", tt.in, typ, n, err, tt.typ, tt.n)
		}
	}
}

func TestDecodeHelloErrors(t *testing.T) {
	good := helloBody(sampleHello)
	v2 := bytes.Clone(good)
	v2[5] = 2
	tests := []struct {
		in   []byte
		want string
	}{
		{nil, "not a weir transport peer (bad magic)"},
		{[]byte("HTTP/1.1"), "not a weir transport peer (bad magic)"},
		{v2, "protocol version 2, ours 1"},
		{v2[:6], "protocol version 2, ours 1"},
		{good[:helloFixed-1], "hello of 27 bytes is too short"},
		{good[:len(good)-1], "hello of 35 bytes with a fingerprint of 8"},
		{append(bytes.Clone(good), 0), "hello of 37 bytes with a fingerprint of 8"},
	}
	for _, tt := range tests {
		if _, err := decodeHello(tt.in); err == nil || err.Error() != tt.want {
			t.Errorf("decodeHello(%q) = %v; want %v", tt.in, err, tt.want)
		}
	}
}

func TestCheckHello(t *testing.T) {
	ours := hello{Version: protoVersion, Index: 1, Processes: 3, Fingerprint: "plan-abc", Nonce: [16]byte{9}}
	with := func(edit func(h *hello)) hello {
		h := sampleHello
		h.Index = 0
		edit(&h)
		return h
	}
	tests := []struct {
		name     string
		h        hello
		want     int
		log, msg string
	}{
		{"ok accepted", with(func(h *hello) {}), -1, "", ""},
		{"ok dialed", with(func(h *hello) { h.Index = 2 }), 2, "", ""},
		{"fingerprint", with(func(h *hello) { h.Fingerprint = "plan-0123456789abcdef" }), -1,
			`job fingerprint differs (theirs "plan-0123456"…, ours "plan-abc")`,
			`job fingerprint differs (theirs "plan-abc", ours "plan-0123456"…)`},
		{"count", with(func(h *hello) { h.Processes = 4 }), -1,
			"process count differs (theirs 4, ours 3)", "process count differs (theirs 3, ours 4)"},
		{"range", with(func(h *hello) { h.Index = 3 }), -1,
			"process index 3 out of range [0, 3)", "process index 3 out of range [0, 3)"},
		{"itself", with(func(h *hello) { h.Index = 1 }), -1,
			"process 1 connected to itself", "process 1 connected to itself"},
		{"reflected", with(func(h *hello) { h.Nonce = ours.Nonce }), -1,
			"process 1 connected to itself", "process 1 connected to itself"},
		{"wrong index", with(func(h *hello) { h.Index = 0 }), 2,
			"process 0 answered at the address of process 2", "you are process 0 but answered at the address of process 2"},
		{"higher dials", with(func(h *hello) { h.Index = 2 }), -1,
			"process 2 dialed us, but only lower indexes dial higher ones", "process 1 must wait for you to dial it"},
	}
	for _, tt := range tests {
		r := checkHello(tt.h, ours, 1, 3, tt.want)
		var log, msg string
		if r != nil {
			log, msg = r.log, r.peer
		}
		if log != tt.log || msg != tt.msg {
			t.Errorf("%s: checkHello(%+v) = %q, %q; want %q, %q", tt.name, tt.h, log, msg, tt.log, tt.msg)
		}
	}
}

func TestProof(t *testing.T) {
	a, b := helloBody(sampleHello), helloBody(hello{Version: 1, Index: 2, Processes: 3, Fingerprint: "plan-abc"})
	p := proof("s", a, b)
	if !checkProof("s", b, a, p) {
		t.Error("checkProof(right secret) = false; want true")
	}
	for _, tt := range []struct {
		secret    string
		own, peer []byte
	}{{"t", b, a}, {"", b, a}, {"s", a, b}} {
		if checkProof(tt.secret, tt.own, tt.peer, p) {
			t.Errorf("checkProof(%q, %.8q, %.8q) = true; want false", tt.secret, tt.own, tt.peer)
		}
	}
	if len(p) != proofSize {
		t.Errorf("proof of %d bytes; want %d", len(p), proofSize)
	}
}

func TestDecodeReason(t *testing.T) {
	tests := []struct{ in, want string }{
		{"wrong secret", "wrong secret"},
		{"a\nb\x1b[0m", "a?b?[0m"},
		{"\xff\xfeok", "?ok"},
		{strings.Repeat("x", 600), strings.Repeat("x", MaxReason)},
	}
	for _, tt := range tests {
		if got := decodeReason([]byte(tt.in)); got != tt.want {
			t.Errorf("decodeReason(%.20q) = %.20q; want %.20q", tt.in, got, tt.want)
		}
	}
}
