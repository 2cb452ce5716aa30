package transport

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

var sampleHello = hello{Version: protoVersion, Index: 1, Processes: 3, Nonce: [16]byte{1, 2, 3}}

func TestHelloRoundTrip(t *testing.T) {
	for _, h := range []hello{sampleHello, {Version: protoVersion}, {Version: protoVersion, Index: 65535, Processes: 0, Nonce: [16]byte{15: 0xff}}} {
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
		{[]byte{4, 0x08, 0x01}, 0, 0, "transport: handshake: refusal of 2049 bytes exceeds 2048"},
		{[]byte{5, 0x08, 0x01}, 5, 0, ""}, // settings may be longer: incomplete
		{[]byte{5, 0, 0}, msgSettings, 3, ""},
		{[]byte{6, 0, 0}, 0, 0, "transport: handshake: unknown message type 6"},
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
	v1 := bytes.Clone(good)
	v1[5] = 1
	v2 := bytes.Clone(good)
	v2[5] = 2 // before markers carried an idle flag
	tests := []struct {
		in   []byte
		want string
	}{
		{nil, "not a weir transport peer (bad magic)"},
		{[]byte("HTTP/1.1"), "not a weir transport peer (bad magic)"},
		{[]byte("WEIR\x00"), "not a weir transport peer (bad magic)"},
		{v1, "protocol version 1, ours 3"},
		{v1[:6], "protocol version 1, ours 3"},
		{v2, "protocol version 2, ours 3"},
		{good[:helloFixed-1], "hello of 25 bytes; want 26"},
		{append(bytes.Clone(good), 0), "hello of 27 bytes; want 26"},
	}
	for _, tt := range tests {
		if _, err := decodeHello(tt.in); err == nil || err.Error() != tt.want {
			t.Errorf("decodeHello(%q) = %v; want %v", tt.in, err, tt.want)
		}
	}
}

func TestJudge(t *testing.T) {
	mine := []Setting{{"binary", "b1"}, {"--workers", "2"}, {"plan", "p1"}}
	with := func(edit func(h *hello)) hello {
		h := sampleHello
		h.Index = 0
		edit(&h)
		return h
	}
	tests := []struct {
		name     string
		h        hello
		theirs   []Setting
		want     int
		mismatch string // what, here, there
		log, msg string
	}{
		{"ok accepted", with(func(h *hello) {}), mine, -1, "", "", ""},
		{"ok dialed", with(func(h *hello) { h.Index = 2 }), mine, 2, "", "", ""},
		{"ok in another order", with(func(h *hello) {}), []Setting{mine[2], mine[0], mine[1]}, -1, "", "", ""},
		{"count", with(func(h *hello) { h.Processes = 4; h.Index = 3 }), mine, -1, "process count 3 4", "", ""},
		{"count of 65536", with(func(h *hello) { h.Processes = 0 }), mine, -1, "process count 3 65536", "", ""},
		{"range", with(func(h *hello) { h.Index = 3 }), mine, -1, "",
			"process index 3 out of range [0, 3)", "process index 3 out of range [0, 3)"},
		{"itself", with(func(h *hello) { h.Index = 1 }), mine, -1, "",
			"process 1 connected to itself", "process 1 connected to itself"},
		{"wrong index", with(func(h *hello) { h.Index = 0 }), mine, 2, "",
			"process 0 answered at the address of process 2", "you are process 0 but answered at the address of process 2"},
		{"higher dials", with(func(h *hello) { h.Index = 2 }), mine, -1, "",
			"process 2 dialed us, but only lower indexes dial higher ones", "process 1 must wait for you to dial it"},
		{"index before settings", with(func(h *hello) { h.Index = 2 }), nil, -1, "",
			"process 2 dialed us, but only lower indexes dial higher ones", "process 1 must wait for you to dial it"},
		{"value", with(func(h *hello) {}), []Setting{{"binary", "b1"}, {"--workers", "3"}, {"plan", "p2"}}, -1,
			"--workers 2 3", "", ""},
		// Process 0's order decides: it names binary first, so we do.
		{"lower index's order", with(func(h *hello) {}), []Setting{{"plan", "p2"}, {"binary", "b2"}, {"--workers", "2"}}, -1,
			"plan p1 p2", "", ""},
		{"higher index's order", with(func(h *hello) { h.Index = 2 }), []Setting{{"plan", "p2"}, {"binary", "b2"}, {"--workers", "2"}}, 2,
			"binary b1 b2", "", ""},
		{"theirs only", with(func(h *hello) {}), append(slices.Clone(mine), Setting{"--checkpoint-every", "10"}), -1,
			"--checkpoint-every not set 10", "", ""},
		{"ours only", with(func(h *hello) {}), mine[:2], -1, "plan p1 not set", "", ""},
		{"ours only, dialed", with(func(h *hello) { h.Index = 2 }), mine[1:], 2, "binary b1 not set", "", ""},
	}
	for _, tt := range tests {
		m, r := judge(1, 3, tt.want, mine, tt.h, tt.theirs)
		var got, log, msg string
		if m != nil {
			got = m.what + " " + m.here + " " + m.there
		}
		if r != nil {
			log, msg = r.log, r.peer
		}
		if got != tt.mismatch || log != tt.log || msg != tt.msg {
			t.Errorf("%s: judge(%+v, %v) = %q, %q, %q; want %q, %q, %q", tt.name, tt.h, tt.theirs, got, log, msg, tt.mismatch, tt.log, tt.msg)
		}
	}
}

func TestProof(t *testing.T) {
	a, b := helloBody(sampleHello), helloBody(hello{Version: protoVersion, Index: 2, Processes: 3})
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
