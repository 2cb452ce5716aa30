package transport

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// decodeChunks decodes b fed in chunks whose sizes cycle through sizes (a
// nil sizes feeds b whole). It returns the frames, with payloads copied,
// and the error that stopped decoding, if any.
func decodeChunks(d *Decoder, b []byte, sizes []int) ([]Frame, error) {
	var frames []Frame
	for k := 0; len(b) > 0; k++ {
		n := len(b)
		if len(sizes) > 0 {
			n = min(n, sizes[k%len(sizes)])
		}
		chunk := b[:n]
		b = b[n:]
		for len(chunk) > 0 {
			c, f, ok, err := d.Feed(chunk)
			if err != nil {
				return frames, err
			}
			if c == 0 && !ok {
				return frames, fmt.Errorf("Feed(%d bytes) consumed nothing", len(chunk))
			}
			chunk = chunk[c:]
			if ok {
				if f.Payload != nil {
					f.Payload = bytes.Clone(f.Payload)
				}
				frames = append(frames, f)
			}
		}
	}
	return frames, nil
}

// frameString formats frames for messages, payloads abbreviated.
func frameString(fs []Frame) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "{%v ch %d %d→%d seq %d credits %d payload %d bytes %.8q} ",
			f.Kind, f.Channel, f.Source, f.Target, f.Seq, f.Credits, len(f.Payload), f.Payload)
	}
	return b.String()
}

var sampleFrames = []Frame{
	{Kind: KindData, Channel: 7, Source: 1, Target: 2, Seq: 1, Payload: []byte("hello")},
	{Kind: KindData, Channel: 7, Source: 1, Target: 2, Seq: 2, Payload: []byte{}},
	{Kind: KindData, Channel: 1<<32 - 1, Source: 65535, Target: 0, Seq: 1<<64 - 1, Payload: bytes.Repeat([]byte{0xAB}, 1000)},
	{Kind: KindCredit, Channel: 7, Source: 2, Target: 1, Credits: 16},
	{Kind: KindHeartbeat, Source: 3, Target: 4},
	{Kind: KindClose, Source: 3, Target: 4},
	{Kind: KindClose, Source: 3, Target: 4, Payload: []byte("transport: peer 1 (x): gone")},
}

func TestFrameRoundTrip(t *testing.T) {
	for _, f := range sampleFrames {
		b := AppendFrame(nil, f)
		for _, sizes := range [][]int{nil, {1}, {3, 7}, {HeaderSize}} {
			var d Decoder
			got, err := decodeChunks(&d, b, sizes)
			if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], f) {
				t.Errorf("Decode(%.40q) in chunks %v = %s, %v; want %s", b, sizes, frameString(got), err, frameString([]Frame{f}))
			}
		}
	}
	var all []byte
	for _, f := range sampleFrames {
		all = AppendFrame(all, f)
	}
	var d Decoder
	got, err := decodeChunks(&d, all, []int{5})
	if err != nil || !reflect.DeepEqual(got, sampleFrames) {
		t.Errorf("Decode(all samples) = %s, %v; want %s", frameString(got), err, frameString(sampleFrames))
	}
}

// header encodes a bare header.
func header(k Kind, length uint32) []byte {
	return AppendHeader(nil, Header{Kind: k, Channel: 7, Source: 1, Target: 2, Length: length, Seq: 1})
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		in   []byte
		want string
	}{
		{header(0, 0), "transport: frame: unknown kind 0"},
		{header(5, 0), "transport: frame: unknown kind 5"},
		{header(KindData, MaxPayload+1), "transport: frame: data frame of 67108865 bytes exceeds the maximum 67108864"},
		{header(KindData, 1<<32-1), "transport: frame: data frame of 4294967295 bytes exceeds the maximum 67108864"},
		{header(KindCredit, 8), "transport: frame: credit frame of 8 bytes; want 4"},
		{append(header(KindCredit, 4), 0, 0, 0, 0), "transport: frame: credit frame for channel 7 grants no credit"},
		{header(KindHeartbeat, 1), "transport: frame: heartbeat frame of 1 bytes; want 0"},
		{header(KindClose, MaxReason+1), "transport: frame: close frame of 513 bytes exceeds the maximum 512"},
	}
	for _, tt := range tests {
		allocs := 0
		d := Decoder{Alloc: func(n int) []byte { allocs++; return make([]byte, n) }}
		_, err := decodeChunks(&d, tt.in, nil)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Decode(%q) = %v; want %v", tt.in, err, tt.want)
		}
		if allocs != 0 {
			t.Errorf("Decode(%q) allocated %d payloads; want none", tt.in, allocs)
		}
		if _, _, _, again := d.Feed([]byte{1}); again != err {
			t.Errorf("Feed after %v = %v; want the same error", err, again)
		}
	}
}

func TestDecoderMax(t *testing.T) {
	d := Decoder{Max: 10}
	_, err := decodeChunks(&d, AppendFrame(nil, Frame{Kind: KindData, Payload: make([]byte, 11)}), nil)
	if want := "exceeds the maximum 10"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Decode(11-byte payload) with Max 10 = %v; want an error saying %q", err, want)
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{KindData: "data", KindCredit: "credit", KindHeartbeat: "heartbeat", KindClose: "close", 9: "kind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q; want %q", uint8(k), got, want)
		}
	}
}

func TestPool(t *testing.T) {
	tests := []struct{ n, class int }{{0, 6}, {1, 6}, {64, 6}, {65, 7}, {4096, 12}, {4097, 13}, {MaxPayload, maxClass}}
	for _, tt := range tests {
		if got := classOf(tt.n); got != tt.class {
			t.Errorf("classOf(%d) = %d; want %d", tt.n, got, tt.class)
		}
		b := getBuf(tt.n)
		if len(b) != tt.n || cap(b) < tt.n {
			t.Errorf("getBuf(%d) = len %d cap %d; want len %d", tt.n, len(b), cap(b), tt.n)
		}
		putBuf(b)
	}
	putBuf(make([]byte, 0, 100)) // an odd capacity serves class 6
	if b := getBuf(64); cap(b) < 64 {
		t.Errorf("getBuf(64) = cap %d", cap(b))
	}
}
