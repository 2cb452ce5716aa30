package transport

import (
	"bytes"
	"net"
	"reflect"
	"testing"
	"time"
)

var sampleNotes = []note{
	{op: noteJoined, slot: 2, inc: 0x0102030405060708},
	{op: noteLeft, slot: 65535, inc: 1},
	{op: noteSynced},
}

func memberFrame(n note) Frame {
	return Frame{Kind: KindMember, Source: 1, Target: 2, Payload: appendNote(nil, n)}
}

// TestMemberFrames decodes member frames in chunks of any size with an
// elastic mesh's Decoder, and refuses them with a fixed mesh's.
func TestMemberFrames(t *testing.T) {
	var all []byte
	var want []Frame
	for _, n := range sampleNotes {
		f := memberFrame(n)
		all = AppendFrame(all, f)
		want = append(want, f, sampleFrames[len(want)%len(sampleFrames)])
		all = AppendFrame(all, want[len(want)-1])
	}
	for _, sizes := range [][]int{nil, {1}, {3, 7}, {HeaderSize}} {
		d := Decoder{Elastic: true}
		got, err := decodeChunks(&d, all, sizes)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Decode(member frames) in chunks %v = %s, %v; want %s", sizes, frameString(got), err, frameString(want))
		}
		for _, f := range got {
			if f.Kind != KindMember {
				continue
			}
			if n, err := decodeNote(f.Payload); err != nil || !bytes.Equal(appendNote(nil, n), f.Payload) {
				t.Errorf("decodeNote(%x) = %+v, %v", f.Payload, n, err)
			}
		}
	}
	var fixed Decoder
	if _, err := decodeChunks(&fixed, all, nil); err == nil || err.Error() != "transport: frame: unknown kind 5" {
		t.Errorf("a fixed mesh's Decode(member frame) = %v; want unknown kind 5", err)
	}
	if KindMember.String() != "member" {
		t.Errorf("KindMember.String() = %q", KindMember.String())
	}
}

func TestMemberFrameErrors(t *testing.T) {
	note := func(b ...byte) []byte {
		return append(AppendHeader(nil, Header{Kind: KindMember, Source: 1, Target: 2, Length: uint32(len(b))}), b...)
	}
	tests := []struct {
		in   []byte
		want string
	}{
		{note(1, 0, 2), "transport: frame: member frame of 3 bytes; want 11"},
		{note(make([]byte, 12)...), "transport: frame: member frame of 12 bytes; want 11"},
		{note(0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1), "transport: frame: member note of unknown op(0)"},
		{note(4, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1), "transport: frame: member note of unknown op(4)"},
		{note(3, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0), "transport: frame: synced note about slot 2, incarnation 0"},
		{note(1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0), "transport: frame: joined note about slot 2 without an incarnation"},
	}
	for _, tt := range tests {
		d := Decoder{Elastic: true}
		_, err := decodeChunks(&d, tt.in, nil)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Decode(%x) = %v; want %v", tt.in, err, tt.want)
		}
	}
}

var sampleElasticHello = hello{Version: protoVersion, Index: 2, Processes: 8, Nonce: [16]byte{9},
	Elastic: true, Incarnation: 0xfeedface, Contact: true}

func TestElasticHello(t *testing.T) {
	probe := sampleElasticHello
	probe.Probe = true
	for _, h := range []hello{sampleElasticHello, probe, {Version: protoVersion, Elastic: true, Incarnation: 1}} {
		body := helloBody(h)
		if len(body) != helloElastic {
			t.Errorf("helloBody(%+v) of %d bytes; want %d", h, len(body), helloElastic)
		}
		if got, err := decodeHello(body); err != nil || got != h {
			t.Errorf("decodeHello(helloBody(%+v)) = %+v, %v", h, got, err)
		}
	}
	good := helloBody(sampleElasticHello)
	flags, noInc, v2 := bytes.Clone(good), bytes.Clone(good), bytes.Clone(good)
	flags[len(flags)-1] = 5
	copy(noInc[helloFixed:], make([]byte, 8))
	v2[5] = 2
	tests := []struct {
		in   []byte
		want string
	}{
		{good[:helloFixed], "hello of 26 bytes; want 35"},
		{append(bytes.Clone(good), 0), "hello of 36 bytes; want 35"},
		{flags, "hello with unknown flags 0x5"},
		{noInc, "elastic hello without an incarnation"},
		{v2, "protocol version 2, ours 3"},
	}
	for _, tt := range tests {
		if _, err := decodeHello(tt.in); err == nil || err.Error() != tt.want {
			t.Errorf("decodeHello(%x) = %v; want %v", tt.in, err, tt.want)
		}
	}
}

func TestJudgeElastic(t *testing.T) {
	mine := []Setting{{"binary", "b1"}}
	with := func(edit func(h *hello)) hello {
		h := hello{Version: protoVersion, Index: 0, Processes: 4, Elastic: true, Incarnation: 7}
		edit(&h)
		return h
	}
	r := rules{self: 1, procs: 4, want: -1, accepted: true, elastic: true}
	dialed := r
	dialed.accepted = false
	fixed := r
	fixed.elastic = false
	tests := []struct {
		name     string
		r        rules
		h        hello
		mismatch string
		log      string
	}{
		{"lower dials", r, with(func(h *hello) {}), "", ""},
		{"a joiner's contact", r, with(func(h *hello) { h.Index, h.Contact = 3, true }), "", ""},
		{"higher dials", r, with(func(h *hello) { h.Index = 3 }), "", "process 3 dialed us, but only lower indexes dial higher ones"},
		{"we dial a contact", dialed, with(func(h *hello) { h.Index = 3 }), "", ""},
		{"slot count", r, with(func(h *hello) { h.Processes = 5 }), "slot count 4 5", ""},
		{"fixed peer", r, with(func(h *hello) { h.Elastic = false }), "mesh elastic fixed", ""},
		{"elastic peer", fixed, with(func(h *hello) {}), "mesh fixed elastic", ""},
	}
	for _, tt := range tests {
		m, rf := judgeAs(tt.r, mine, tt.h, mine)
		var got, log string
		if m != nil {
			got = m.what + " " + m.here + " " + m.there
		}
		if rf != nil {
			log = rf.log
		}
		if got != tt.mismatch || log != tt.log {
			t.Errorf("%s: judgeAs(%+v) = %q, %q; want %q, %q", tt.name, tt.h, got, log, tt.mismatch, tt.log)
		}
	}
}

// FuzzNote decodes a member note: what decodes encodes as it was.
func FuzzNote(f *testing.F) {
	for _, n := range sampleNotes {
		f.Add(appendNote(nil, n))
	}
	f.Add([]byte{3, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := decodeNote(b)
		if err == nil && !bytes.Equal(appendNote(nil, n), b) {
			t.Fatalf("decodeNote(%x) = %+v, which encodes as %x", b, n, appendNote(nil, n))
		}
	})
}

// TestElasticProtocolError has a fake joiner handshake with a member and
// send it a note about a slot that does not exist: the member fails,
// naming it, as for any protocol error.
func TestElasticProtocolError(t *testing.T) {
	m := newElasticMesh(t, 3)
	m.start(0)
	c, err := net.Dial("tcp", m.addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h := hello{Version: protoVersion, Index: 2, Processes: 3, Nonce: [16]byte{4}, Elastic: true, Incarnation: 99, Contact: true}
	if r, err := fakeShake(c, h, "s3cret", testSettings); r != "" || err != nil {
		t.Fatalf("handshake = %q, %v", r, err)
	}
	c.Write(AppendFrame(nil, Frame{Kind: KindMember, Source: 2, Target: 0, Payload: appendNote(nil, note{op: noteJoined, slot: 9, inc: 5})}))
	nw := m.net(0)
	within(t, nw.Done(), 5*time.Second, "Done after a protocol error")
	want := "transport: peer 2 (" + m.addrs[2] + "): member note about slot 9 of 3"
	if err := nw.Err(); err == nil || err.Error() != want {
		t.Errorf("Err() = %v; want %s", err, want)
	}
}
