package transport

import (
	"encoding/binary"
	"fmt"
)

// HeaderSize is the size of a frame header on the wire.
//
//	kind     uint8   KindData, KindCredit, KindHeartbeat, KindClose or KindMember
//	channel  uint32  channel id
//	source   uint16  sending process
//	target   uint16  receiving process
//	length   uint32  payload bytes that follow the header
//	sequence uint64  data frames: 1, 2, ... per channel and direction
//
// All integers are big-endian. A credit frame's payload is the uint32
// number of credits it grants; a heartbeat frame has none; a close frame
// has none when the sender shuts down in order, or says why it failed
// (at most MaxReason bytes of text); a member frame, which only an
// elastic mesh sends, carries a membership note of noteSize bytes
// (note.go).
const HeaderSize = 1 + 4 + 2 + 2 + 4 + 8

// MaxPayload is the largest payload of a data frame. Longer lengths are a
// protocol error, found before anything is allocated for them.
const MaxPayload = 64 << 20

// MaxReason is the longest payload of a close frame.
const MaxReason = 512

// creditSize is the payload length of a credit frame.
const creditSize = 4

// Kind is the kind of a frame.
type Kind uint8

// The kinds of frames.
const (
	KindData      Kind = 1 + iota // a payload of a channel
	KindCredit                    // the receiver grants credits for a channel
	KindHeartbeat                 // the sender is alive
	KindClose                     // the sender shuts down (in order, or failed)
	KindMember                    // a membership note of an elastic mesh
)

func (k Kind) String() string {
	switch k {
	case KindData:
		return "data"
	case KindCredit:
		return "credit"
	case KindHeartbeat:
		return "heartbeat"
	case KindClose:
		return "close"
	case KindMember:
		return "member"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Header is a decoded frame header.
type Header struct {
	Kind    Kind
	Channel uint32
	Source  uint16
	Target  uint16
	Length  uint32
	Seq     uint64
}

// Frame is a decoded frame.
type Frame struct {
	Kind    Kind
	Channel uint32
	Source  uint16
	Target  uint16
	Seq     uint64 // data frames
	Credits uint32 // credit frames
	// Payload is a data frame's payload, a close frame's reason or a
	// member frame's note. The latter two are only valid until the next
	// call of Feed.
	Payload []byte
}

// AppendHeader appends the encoding of h to b.
func AppendHeader(b []byte, h Header) []byte {
	b = append(b, byte(h.Kind))
	b = binary.BigEndian.AppendUint32(b, h.Channel)
	b = binary.BigEndian.AppendUint16(b, h.Source)
	b = binary.BigEndian.AppendUint16(b, h.Target)
	b = binary.BigEndian.AppendUint32(b, h.Length)
	return binary.BigEndian.AppendUint64(b, h.Seq)
}

// AppendFrame appends the encoding of f, header and payload, to b.
func AppendFrame(b []byte, f Frame) []byte {
	h := Header{Kind: f.Kind, Channel: f.Channel, Source: f.Source, Target: f.Target, Seq: f.Seq}
	switch f.Kind {
	case KindData:
		h.Length = uint32(len(f.Payload))
		return append(AppendHeader(b, h), f.Payload...)
	case KindCredit:
		h.Length = creditSize
		return binary.BigEndian.AppendUint32(AppendHeader(b, h), f.Credits)
	case KindClose, KindMember:
		h.Length = uint32(len(f.Payload))
		return append(AppendHeader(b, h), f.Payload...)
	}
	return AppendHeader(b, h)
}

// ParseHeader decodes and checks the header in the first HeaderSize bytes
// of b (it panics if b is shorter). A data frame may carry at most max
// payload bytes. Member frames are refused as of an unknown kind: only
// the Decoder of an elastic mesh accepts them.
func ParseHeader(b []byte, max int) (Header, error) { return parseHeader(b, max, false) }

// parseHeader is ParseHeader, accepting member frames if elastic.
func parseHeader(b []byte, max int, elastic bool) (Header, error) {
	b = b[:HeaderSize]
	h := Header{
		Kind:    Kind(b[0]),
		Channel: binary.BigEndian.Uint32(b[1:]),
		Source:  binary.BigEndian.Uint16(b[5:]),
		Target:  binary.BigEndian.Uint16(b[7:]),
		Length:  binary.BigEndian.Uint32(b[9:]),
		Seq:     binary.BigEndian.Uint64(b[13:]),
	}
	switch h.Kind {
	case KindData:
		if uint64(h.Length) > uint64(max) {
			return h, fmt.Errorf("transport: frame: data frame of %d bytes exceeds the maximum %d", h.Length, max)
		}
	case KindCredit:
		if h.Length != creditSize {
			return h, fmt.Errorf("transport: frame: credit frame of %d bytes; want %d", h.Length, creditSize)
		}
	case KindClose:
		if h.Length > MaxReason {
			return h, fmt.Errorf("transport: frame: close frame of %d bytes exceeds the maximum %d", h.Length, MaxReason)
		}
	case KindHeartbeat:
		if h.Length != 0 {
			return h, fmt.Errorf("transport: frame: %v frame of %d bytes; want 0", h.Kind, h.Length)
		}
	case KindMember:
		if !elastic {
			return h, fmt.Errorf("transport: frame: unknown kind %d", uint8(h.Kind))
		}
		if h.Length != noteSize {
			return h, fmt.Errorf("transport: frame: %v frame of %d bytes; want %d", h.Kind, h.Length, noteSize)
		}
	default:
		return h, fmt.Errorf("transport: frame: unknown kind %d", uint8(h.Kind))
	}
	return h, nil
}

// Decoder decodes frames from a byte stream fed in chunks of any size. It
// is a pure state machine over bytes: no I/O, no goroutines. Errors are
// sticky: once Feed returned one, it returns the same forever.
type Decoder struct {
	// Max is the largest payload accepted; 0 means MaxPayload.
	Max int
	// Alloc returns a buffer of length n for a payload; nil means make.
	// It is called once per data frame, after its header was checked.
	Alloc func(n int) []byte
	// Elastic accepts the member frames of an elastic mesh.
	Elastic bool

	hdr     [HeaderSize]byte
	nhdr    int // bytes of hdr filled
	h       Header
	payload []byte // the current frame's payload, being filled
	npay    int    // bytes of payload filled
	credit  [creditSize]byte
	note    [noteSize]byte
	reason  [MaxReason]byte
	err     error
}

// Feed consumes bytes of p up to the end of the next frame. It returns how
// many bytes it consumed and, if a frame was completed, the frame and
// ok = true; call it again with the rest of p. A data frame's payload is
// the buffer Alloc returned, owned by the caller from then on.
func (d *Decoder) Feed(p []byte) (n int, f Frame, ok bool, err error) {
	if d.err != nil {
		return 0, Frame{}, false, d.err
	}
	if d.nhdr < HeaderSize {
		n = copy(d.hdr[d.nhdr:], p)
		d.nhdr += n
		if d.nhdr < HeaderSize {
			return n, Frame{}, false, nil
		}
		max := d.Max
		if max <= 0 || max > MaxPayload {
			max = MaxPayload
		}
		d.h, d.err = parseHeader(d.hdr[:], max, d.Elastic)
		if d.err != nil {
			return n, Frame{}, false, d.err
		}
		d.npay = 0
		switch d.h.Kind {
		case KindData:
			d.payload = d.alloc(int(d.h.Length))
		case KindCredit:
			d.payload = d.credit[:]
		case KindClose:
			d.payload = d.reason[:d.h.Length]
		case KindMember:
			d.payload = d.note[:]
		default:
			d.payload = nil
		}
	}
	c := copy(d.payload[d.npay:], p[n:])
	n += c
	f, ok = d.fill(c)
	return n, f, ok, d.err
}

// fill records n more bytes of the payload. When they complete the
// frame, it returns the frame and ok = true.
func (d *Decoder) fill(n int) (f Frame, ok bool) {
	d.npay += n
	if d.npay < len(d.payload) {
		return Frame{}, false
	}
	h := d.h
	f = Frame{Kind: h.Kind, Channel: h.Channel, Source: h.Source, Target: h.Target, Seq: h.Seq}
	switch h.Kind {
	case KindData:
		f.Payload = d.payload
	case KindClose:
		if len(d.payload) > 0 {
			f.Payload = d.payload
		}
	case KindCredit:
		f.Credits = binary.BigEndian.Uint32(d.credit[:])
		if f.Credits == 0 {
			d.err = fmt.Errorf("transport: frame: credit frame for channel %d grants no credit", h.Channel)
			return Frame{}, false
		}
	case KindMember:
		if _, err := decodeNote(d.payload); err != nil {
			d.err = fmt.Errorf("transport: frame: %w", err)
			return Frame{}, false
		}
		f.Payload = d.payload
	}
	d.nhdr, d.payload = 0, nil
	return f, true
}

func (d *Decoder) alloc(n int) []byte {
	if d.Alloc == nil {
		return make([]byte, n)
	}
	return d.Alloc(n)[:n]
}
