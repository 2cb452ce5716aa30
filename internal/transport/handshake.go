package transport

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// The handshake, run once on each new connection by both sides at once:
//
//	→ hello   magic "WEIR", version, index, processes, fingerprint, nonce
//	← hello
//	→ proof   HMAC-SHA256(secret, own hello || peer hello)
//	← proof
//	→ ok
//	← ok
//
// Either side may answer any step with a refusal that says why, and close.
// Each message is: type uint8, body length uint16, body. This file holds
// the pure encoding, decoding and checking; dial.go does the I/O.

const (
	protoMagic    = "WEIR"
	protoVersion  = 1
	nonceSize     = 16
	proofSize     = sha256.Size
	msgHeaderSize = 3
	maxMsgBody    = 2048
	helloFixed    = len(protoMagic) + 2 + 2 + 2 + 2 + nonceSize // body without the fingerprint
)

// msgType is the type of a handshake message.
type msgType uint8

const (
	msgHello msgType = 1 + iota
	msgProof
	msgOK
	msgRefuse
)

func (t msgType) String() string {
	switch t {
	case msgHello:
		return "hello"
	case msgProof:
		return "proof"
	case msgOK:
		return "ok"
	case msgRefuse:
		return "refusal"
	}
	return fmt.Sprintf("message type %d", uint8(t))
}

// hello introduces a process to its peer.
type hello struct {
	Version     uint16
	Index       uint16
	Processes   uint16 // mod 1<<16: MaxProcesses travels as 0
	Fingerprint string
	Nonce       [nonceSize]byte
}

// appendMsg appends a message of type t with the given body.
func appendMsg(b []byte, t msgType, body []byte) []byte {
	b = append(b, byte(t))
	b = binary.BigEndian.AppendUint16(b, uint16(len(body)))
	return append(b, body...)
}

// helloBody encodes h as a hello body.
func helloBody(h hello) []byte {
	b := make([]byte, 0, helloFixed+len(h.Fingerprint))
	b = append(b, protoMagic...)
	b = binary.BigEndian.AppendUint16(b, h.Version)
	b = binary.BigEndian.AppendUint16(b, h.Index)
	b = binary.BigEndian.AppendUint16(b, h.Processes)
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.Fingerprint)))
	b = append(b, h.Fingerprint...)
	return append(b, h.Nonce[:]...)
}

// splitMsg parses the message at the start of b. It returns n == 0 and no
// error while b holds only part of one.
func splitMsg(b []byte) (t msgType, body []byte, n int, err error) {
	if len(b) < msgHeaderSize {
		return 0, nil, 0, nil
	}
	t = msgType(b[0])
	l := int(binary.BigEndian.Uint16(b[1:]))
	if t < msgHello || t > msgRefuse {
		return t, nil, 0, fmt.Errorf("transport: handshake: unknown %v", t)
	}
	if l > maxMsgBody {
		return t, nil, 0, fmt.Errorf("transport: handshake: %v of %d bytes exceeds %d", t, l, maxMsgBody)
	}
	if len(b) < msgHeaderSize+l {
		return t, nil, 0, nil
	}
	return t, b[msgHeaderSize : msgHeaderSize+l], msgHeaderSize + l, nil
}

// errBadMagic is a hello that does not come from this transport.
var errBadMagic = errors.New("not a weir transport peer (bad magic)")

// decodeHello decodes a hello body. A hello of another protocol version
// decodes only up to the version, with an error that names it.
func decodeHello(body []byte) (hello, error) {
	var h hello
	if len(body) < len(protoMagic)+2 || string(body[:len(protoMagic)]) != protoMagic {
		return h, errBadMagic
	}
	b := body[len(protoMagic):]
	h.Version = binary.BigEndian.Uint16(b)
	if h.Version != protoVersion {
		return h, fmt.Errorf("protocol version %d, ours %d", h.Version, protoVersion)
	}
	if len(body) < helloFixed {
		return h, fmt.Errorf("hello of %d bytes is too short", len(body))
	}
	h.Index = binary.BigEndian.Uint16(b[2:])
	h.Processes = binary.BigEndian.Uint16(b[4:])
	fl := int(binary.BigEndian.Uint16(b[6:]))
	if len(body) != helloFixed+fl {
		return h, fmt.Errorf("hello of %d bytes with a fingerprint of %d", len(body), fl)
	}
	b = b[8:]
	h.Fingerprint = string(b[:fl])
	copy(h.Nonce[:], b[fl:])
	return h, nil
}

// refusal says why a peer is refused: log from our point of view, peer
// from the peer's (sent to it).
type refusal struct {
	log, peer string
}

func sameRefusal(why string) *refusal { return &refusal{why, why} }

// mismatch is a refusal for a value that differs between the two sides.
func mismatch(what, theirs, ours string) *refusal {
	return &refusal{
		log:  fmt.Sprintf("%s differs (theirs %s, ours %s)", what, theirs, ours),
		peer: fmt.Sprintf("%s differs (theirs %s, ours %s)", what, ours, theirs),
	}
}

// checkHello checks a peer's hello against our own. want is the index the
// peer must have (we dialed its address), or -1 if we accepted the
// connection: then any index below self is welcome.
func checkHello(h hello, ours hello, self, procs, want int) *refusal {
	switch idx := int(h.Index); {
	case h.Fingerprint != ours.Fingerprint:
		return mismatch("job fingerprint", short(h.Fingerprint), short(ours.Fingerprint))
	case h.Processes != ours.Processes:
		return mismatch("process count", fmt.Sprint(procCount(h.Processes)), fmt.Sprint(procs))
	case idx >= procs:
		return sameRefusal(fmt.Sprintf("process index %d out of range [0, %d)", idx, procs))
	case idx == self || h.Nonce == ours.Nonce:
		return sameRefusal(fmt.Sprintf("process %d connected to itself", self))
	case want >= 0 && idx != want:
		return &refusal{
			log:  fmt.Sprintf("process %d answered at the address of process %d", idx, want),
			peer: fmt.Sprintf("you are process %d but answered at the address of process %d", idx, want),
		}
	case want < 0 && idx > self:
		return &refusal{
			log:  fmt.Sprintf("process %d dialed us, but only lower indexes dial higher ones", idx),
			peer: fmt.Sprintf("process %d must wait for you to dial it", self),
		}
	}
	return nil
}

// procCount decodes a process count sent as uint16.
func procCount(v uint16) int {
	if v == 0 {
		return MaxProcesses
	}
	return int(v)
}

// short abbreviates a fingerprint for messages.
func short(s string) string {
	const n = 12
	if s == "" {
		return `""`
	}
	if len(s) > n {
		return fmt.Sprintf("%q…", s[:n])
	}
	return fmt.Sprintf("%q", s)
}

// proof proves knowledge of secret to the peer: an HMAC over both hellos,
// own first, so that the proof is fresh (nonces) and one-way.
func proof(secret string, own, peer []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("weir transport proof\x00"))
	m.Write(own)
	m.Write(peer)
	return m.Sum(nil)
}

// checkProof reports whether p proves the peer knows secret.
func checkProof(secret string, own, peer, p []byte) bool {
	return hmac.Equal(p, proof(secret, peer, own))
}

// decodeReason decodes a refusal body: bounded, valid UTF-8, no control
// characters, so that a peer cannot forge log lines.
func decodeReason(body []byte) string {
	if len(body) > MaxReason {
		body = body[:MaxReason]
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(string(body), "?"))
}
