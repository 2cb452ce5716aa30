package transport

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// chunking splits fuzz input: the low two bits of the first byte say how
// many of the following bytes are chunk sizes (1 to 4), each size 1 to
// 256; the rest is the stream to decode.
func chunking(data []byte) (sizes []int, stream []byte) {
	if len(data) == 0 {
		return nil, nil
	}
	n := min(int(data[0]&3)+1, len(data)-1)
	for _, b := range data[1 : 1+n] {
		sizes = append(sizes, int(b)+1)
	}
	return sizes, data[1+n:]
}

// fuzzMax bounds payloads while fuzzing, so that a header claiming a
// large length costs little.
const fuzzMax = 1 << 16

func FuzzFrameDecoder(f *testing.F) {
	var all []byte
	for _, fr := range sampleFrames {
		b := AppendFrame(nil, fr)
		f.Add(append([]byte{0, 0}, b...))
		f.Add(append([]byte{3, 0, 2, 20, 255}, b...))
		all = append(all, b...)
	}
	f.Add(append([]byte{1, 6, 1}, all...))
	f.Add(append([]byte{0, 7}, header(KindData, MaxPayload+1)...))
	f.Add(append([]byte{0, 7}, header(KindData, fuzzMax+1)...))
	f.Add(append([]byte{2, 1, 2, 3}, header(KindCredit, 4)...))
	f.Add(append([]byte{0, 0}, header(9, 0)...))
	f.Fuzz(func(t *testing.T, data []byte) { checkDecode(t, data, false) })
}

// FuzzElasticFrameDecoder is FuzzFrameDecoder for an elastic mesh's
// decoder, which takes member frames too.
func FuzzElasticFrameDecoder(f *testing.F) {
	var all []byte
	for _, n := range sampleNotes {
		b := AppendFrame(nil, memberFrame(n))
		f.Add(append([]byte{0, 0}, b...))
		all = append(all, b...)
	}
	for _, fr := range sampleFrames {
		all = AppendFrame(all, fr)
	}
	f.Add(append([]byte{2, 4, 10, 0}, all...))
	f.Add(append([]byte{0, 0}, header(KindMember, noteSize+1)...))
	f.Add(append(append([]byte{0, 0}, header(KindMember, noteSize)...), 9, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1))
	f.Fuzz(func(t *testing.T, data []byte) { checkDecode(t, data, true) })
}

// checkDecode decodes the stream of fuzz input data (chunking) whole and
// in chunks: both must give the same frames and error, and the frames
// must encode as the input's start.
func checkDecode(t *testing.T, data []byte, elastic bool) {
	sizes, stream := chunking(data)
	alloc := func(n int) []byte {
		if n > fuzzMax {
			t.Fatalf("Alloc(%d) beyond the maximum %d", n, fuzzMax)
		}
		return make([]byte, n)
	}
	whole := Decoder{Max: fuzzMax, Alloc: alloc, Elastic: elastic}
	wantFrames, wantErr := decodeChunks(&whole, stream, nil)
	chunked := Decoder{Max: fuzzMax, Alloc: alloc, Elastic: elastic}
	gotFrames, gotErr := decodeChunks(&chunked, stream, sizes)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(gotFrames, wantFrames) {
		t.Fatalf("Decode(%q) in chunks %v = %s, %v; want %s, %v (decoded whole)",
			stream, sizes, frameString(gotFrames), gotErr, frameString(wantFrames), wantErr)
	}
	// Frames decode from their canonical encoding, which is the input.
	var re []byte
	for _, fr := range wantFrames {
		re = AppendFrame(re, fr)
	}
	if !bytes.HasPrefix(stream, re) {
		t.Fatalf("Decode(%q) = %s; they encode as %q, not a prefix of the input", stream, frameString(wantFrames), re)
	}
}

// decodeMsgs splits a handshake stream fed in chunks (nil: whole) into
// messages, decoding hellos and refusals as the handshake does.
func decodeMsgs(stream []byte, sizes []int) ([]string, error) {
	var out []string
	var buf []byte
	for k := 0; len(stream) > 0; k++ {
		n := len(stream)
		if len(sizes) > 0 {
			n = min(n, sizes[k%len(sizes)])
		}
		buf = append(buf, stream[:n]...)
		stream = stream[n:]
		for {
			t, body, used, err := splitMsg(buf)
			if err != nil {
				return out, err
			}
			if used == 0 {
				break
			}
			switch t {
			case msgHello:
				h, err := decodeHello(body)
				if err == nil && !bytes.Equal(helloBody(h), body) {
					return out, fmt.Errorf("hello %q decodes as %+v, which encodes as %q", body, h, helloBody(h))
				}
				out = append(out, fmt.Sprintf("hello %+v %v", h, err))
			case msgSettings:
				st, err := decodeSettings(body)
				if err == nil && !bytes.Equal(settingsBody(st), body) {
					return out, fmt.Errorf("settings %q decode as %q, which encode as %q", body, st, settingsBody(st))
				}
				out = append(out, fmt.Sprintf("settings %q %v", st, err))
			case msgRefuse:
				r := decodeReason(body)
				if len(r) > 3*MaxReason {
					return out, fmt.Errorf("reason of %d bytes", len(r))
				}
				out = append(out, "refuse "+r)
			default:
				out = append(out, fmt.Sprintf("%v %q", t, body))
			}
			buf = buf[used:]
		}
	}
	return out, nil
}

func FuzzHandshake(f *testing.F) {
	h := appendMsg(nil, msgHello, helloBody(sampleHello))
	p := appendMsg(nil, msgProof, proof("s", helloBody(sampleHello), nil))
	ok := appendMsg(nil, msgOK, nil)
	r := appendMsg(nil, msgRefuse, []byte("another job: --workers is 2 at process 0, 3 at process 1"))
	st := appendMsg(nil, msgSettings, settingsBody(testSettings))
	long := appendMsg(nil, msgSettings, settingsBody([]Setting{{"--input", strings.Repeat("/data/in.txt,", 300)}, {"", ""}}))
	f.Add(append([]byte{0, 0}, h...))
	f.Add(append(append(append(append([]byte{3, 0, 1, 2, 3}, h...), p...), st...), ok...))
	eh := appendMsg(nil, msgHello, helloBody(sampleElasticHello))
	f.Add(append(append(append(append([]byte{1, 5, 30}, eh...), p...), st...), ok...))
	f.Add(append([]byte{0, 0}, eh[:len(eh)-1]...))
	f.Add(append([]byte{2, 7, 255, 1}, long...))
	f.Add(append([]byte{0, 0}, st[:len(st)-1]...))
	f.Add([]byte{0, 0, 5, 0, 4, 0, 1, 0, 9})
	f.Add(append([]byte{1, 4, 9}, r...))
	f.Add(append([]byte{0, 0}, appendMsg(nil, msgHello, []byte("HTTP/1.1 200"))...))
	f.Add([]byte{0, 0, 'G', 'E', 'T', ' ', '/'})
	f.Add([]byte{0, 0, 1, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		sizes, stream := chunking(data)
		want, wantErr := decodeMsgs(stream, nil)
		got, gotErr := decodeMsgs(stream, sizes)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("decode(%q) in chunks %v = %q, %v; want %q, %v (decoded whole)", stream, sizes, got, gotErr, want, wantErr)
		}
	})
}

// FuzzSettings builds a list of settings from the input (split at zero
// bytes into names and values) and checks that it decodes as it was
// encoded.
func FuzzSettings(f *testing.F) {
	f.Add([]byte("binary\x00ab12\x00--workers\x002"))
	f.Add([]byte("\x00\x00\x00"))
	f.Add([]byte("--input\x00" + strings.Repeat("a.txt,", 1000)))
	f.Fuzz(func(t *testing.T, data []byte) {
		parts := bytes.Split(data, []byte{0})
		var s []Setting
		for i := 0; i+1 < len(parts); i += 2 {
			s = append(s, Setting{string(parts[i]), string(parts[i+1])})
		}
		if settingsSize(s) > MaxSettingsSize {
			return
		}
		got, err := decodeSettings(settingsBody(s))
		if err != nil || len(got) != len(s) || (len(s) > 0 && !reflect.DeepEqual(got, s)) {
			t.Fatalf("decodeSettings(settingsBody(%q)) = %q, %v", s, got, err)
		}
	})
}
