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

// The handshake, run once on each new connection by both sides at once
// (inside TLS when Config.TLS is set):
//
//	→ hello     magic "WEIR", version, index, processes, nonce
//	            (elastic: and incarnation, flags)
//	← hello
//	→ proof     HMAC-SHA256(secret, own hello || peer hello)
//	← proof
//	→ settings  Config.Settings, sent once the peer's proof checked out
//	← settings
//	→ ok
//	← ok
//
// Either side may answer any step with a refusal that says why, and close.
// Each message is: type uint8, body length uint16, body. This file holds
// the pure encoding, decoding and checking; shake.go does the I/O.
//
// The hello of an elastic mesh (Config.Elastic) sets the version's high
// bit (elasticBit) and carries 9 more bytes: the incarnation, a random
// number that tells this run of the process from others in the same slot,
// and flags (flagContact: the sender joins a running job and asks this
// peer, whatever its index, to let it in; flagProbe with it: the sender
// only asks whether the job runs, and the peer answers with a refusal
// that says so, probe.go). Processes compare the mode
// after the proofs: an elastic process and a fixed one are refused as
// running another job ("mesh is elastic here, fixed there"). The fixed
// mesh's hello is unchanged.
//
// Settings travel only after the proofs, so a process never shows them
// to a peer that has not proven the secret (they name the binary, the
// plan and the input). A side sends its settings only once the peer's
// proof checked out, so a side that receives them knows that the proofs
// checked out both ways: from then on, and only then, a disagreement is
// the real peer's and fails the mesh. Before, a failure is a stranger's
// (a port scan, another job, a peer with another secret) and drops the
// connection only. (A hash of the settings in the hello would tell
// anyone who connects whether a guess of them is right, a worker count
// or a known binary, and could not say what differs.)

const (
	protoMagic       = "WEIR"
	protoVersion     = 3 // 3: markers carry an idle flag (internal/exchange/wire.go)
	nonceSize        = 16
	proofSize        = sha256.Size
	msgHeaderSize    = 3
	maxMsgBody       = 2048            // messages other than settings
	maxSettingsBody  = MaxSettingsSize // a settings message
	helloFixed       = len(protoMagic) + 2 + 2 + 2 + nonceSize
	helloElastic     = helloFixed + 8 + 1
	helloVersionSize = len(protoMagic) + 2 // what every version's hello starts with
	elasticBit       = 1 << 15             // in the version of an elastic mesh's hello
	flagContact      = 1 << 0              // elastic hello: the sender joins through us
	flagProbe        = 1 << 1              // elastic hello: the sender only asks whether the job runs (Probe)
)

// msgType is the type of a handshake message.
type msgType uint8

const (
	msgHello msgType = 1 + iota
	msgProof
	msgOK
	msgRefuse
	msgSettings
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
	case msgSettings:
		return "settings"
	}
	return fmt.Sprintf("message type %d", uint8(t))
}

// hello introduces a process to its peer.
type hello struct {
	Version   uint16
	Index     uint16
	Processes uint16 // mod 1<<16: MaxProcesses travels as 0
	Nonce     [nonceSize]byte

	// An elastic mesh's hello (Elastic) has these too.
	Elastic     bool
	Incarnation uint64
	Contact     bool // flagContact
	Probe       bool // flagProbe
}

// appendMsg appends a message of type t with the given body.
func appendMsg(b []byte, t msgType, body []byte) []byte {
	b = append(b, byte(t))
	b = binary.BigEndian.AppendUint16(b, uint16(len(body)))
	return append(b, body...)
}

// helloBody encodes h as a hello body.
func helloBody(h hello) []byte {
	b := make([]byte, 0, helloElastic)
	b = append(b, protoMagic...)
	v := h.Version
	if h.Elastic {
		v |= elasticBit
	}
	b = binary.BigEndian.AppendUint16(b, v)
	b = binary.BigEndian.AppendUint16(b, h.Index)
	b = binary.BigEndian.AppendUint16(b, h.Processes)
	b = append(b, h.Nonce[:]...)
	if !h.Elastic {
		return b
	}
	b = binary.BigEndian.AppendUint64(b, h.Incarnation)
	var flags byte
	if h.Contact {
		flags |= flagContact
	}
	if h.Probe {
		flags |= flagProbe
	}
	return append(b, flags)
}

// splitMsg parses the message at the start of b. It returns n == 0 and no
// error while b holds only part of one.
func splitMsg(b []byte) (t msgType, body []byte, n int, err error) {
	if len(b) < msgHeaderSize {
		return 0, nil, 0, nil
	}
	t = msgType(b[0])
	l := int(binary.BigEndian.Uint16(b[1:]))
	if t < msgHello || t > msgSettings {
		return t, nil, 0, fmt.Errorf("transport: handshake: unknown %v", t)
	}
	if limit := maxBody(t); l > limit {
		return t, nil, 0, fmt.Errorf("transport: handshake: %v of %d bytes exceeds %d", t, l, limit)
	}
	if len(b) < msgHeaderSize+l {
		return t, nil, 0, nil
	}
	return t, b[msgHeaderSize : msgHeaderSize+l], msgHeaderSize + l, nil
}

// maxBody is the longest body of a message of type t.
func maxBody(t msgType) int {
	if t == msgSettings {
		return maxSettingsBody
	}
	return maxMsgBody
}

// errBadMagic is a hello that does not come from this transport.
var errBadMagic = errors.New("not a weir transport peer (bad magic)")

// decodeHello decodes a hello body, of a fixed or an elastic mesh. A
// hello of another protocol version decodes only up to the version, with
// an error that names it.
func decodeHello(body []byte) (hello, error) {
	var h hello
	if len(body) < helloVersionSize || string(body[:len(protoMagic)]) != protoMagic {
		return h, errBadMagic
	}
	b := body[len(protoMagic):]
	v := binary.BigEndian.Uint16(b)
	h.Version, h.Elastic = v&^elasticBit, v&elasticBit != 0
	if h.Version != protoVersion {
		return h, fmt.Errorf("protocol version %d, ours %d", h.Version, protoVersion)
	}
	size := helloFixed
	if h.Elastic {
		size = helloElastic
	}
	if len(body) != size {
		return h, fmt.Errorf("hello of %d bytes; want %d", len(body), size)
	}
	h.Index = binary.BigEndian.Uint16(b[2:])
	h.Processes = binary.BigEndian.Uint16(b[4:])
	copy(h.Nonce[:], b[6:])
	if !h.Elastic {
		return h, nil
	}
	h.Incarnation = binary.BigEndian.Uint64(b[6+nonceSize:])
	switch flags := b[6+nonceSize+8]; {
	case flags&^(flagContact|flagProbe) != 0:
		return h, fmt.Errorf("hello with unknown flags %#x", flags)
	case h.Incarnation == 0:
		return h, errors.New("elastic hello without an incarnation")
	default:
		h.Contact, h.Probe = flags&flagContact != 0, flags&flagProbe != 0
	}
	return h, nil
}

// refusal says why a peer is refused: log from our point of view, peer
// from the peer's (sent to it).
type refusal struct {
	log, peer string
}

func sameRefusal(why string) *refusal { return &refusal{why, why} }

// reflected reports whether the peer's hello is our own come back: an
// echo, which would otherwise prove our secret with our own proof.
func reflected(h, ours hello) bool { return h.Nonce == ours.Nonce }

// mismatch is something of the job that differs between two processes,
// with both values as shown from our side.
type mismatch struct {
	what, here, there string
}

// judge decides on a peer that proved the secret, from its hello and
// settings: its process count must be ours, its index one we expect, and
// its settings ours. want is the index the peer must have (we dialed its
// address), or -1 if we accepted the connection: then any index below
// self is welcome. The settings are walked in the order of the
// lower-indexed process's list, so that both sides name the same one.
func judge(self, procs, want int, mine []Setting, h hello, theirs []Setting) (*mismatch, *refusal) {
	return judgeAs(rules{self: self, procs: procs, want: want, accepted: want < 0}, mine, h, theirs)
}

// rules are what judgeAs expects of a peer.
type rules struct {
	self, procs int
	want        int  // the peer's index, -1 for any
	accepted    bool // the peer dialed us
	elastic     bool // we are a process of an elastic mesh
}

// judgeAs is judge for a process of either mesh. An elastic process
// calls the process count the slot count, welcomes a higher index that
// dialed it as a joiner's contact (Contact), and, as a joiner, dials its
// contact without knowing its index (want -1, accepted false).
func judgeAs(r rules, mine []Setting, h hello, theirs []Setting) (*mismatch, *refusal) {
	if h.Elastic != r.elastic {
		mode := map[bool]string{true: "elastic", false: "fixed"}
		return &mismatch{"mesh", mode[r.elastic], mode[h.Elastic]}, nil
	}
	count := "process count"
	if r.elastic {
		count = "slot count"
	}
	if n := procCount(h.Processes); n != r.procs {
		return &mismatch{count, fmt.Sprint(r.procs), fmt.Sprint(n)}, nil
	}
	self := r.self
	switch idx := int(h.Index); {
	case idx >= r.procs:
		return nil, sameRefusal(fmt.Sprintf("process index %d out of range [0, %d)", idx, r.procs))
	case idx == self:
		return nil, sameRefusal(fmt.Sprintf("process %d connected to itself", self))
	case r.want >= 0 && idx != r.want:
		return nil, &refusal{
			log:  fmt.Sprintf("process %d answered at the address of process %d", idx, r.want),
			peer: fmt.Sprintf("you are process %d but answered at the address of process %d", idx, r.want),
		}
	case r.accepted && idx > self && !(r.elastic && h.Contact):
		return nil, &refusal{
			log:  fmt.Sprintf("process %d dialed us, but only lower indexes dial higher ones", idx),
			peer: fmt.Sprintf("process %d must wait for you to dial it", self),
		}
	}
	first := self < int(h.Index)
	a, b := theirs, mine
	if first {
		a, b = mine, theirs
	}
	d := firstDifference(a, b)
	if !d.Difference {
		return nil, nil
	}
	here, there := d.sides(first)
	return &mismatch{d.Name, here, there}, nil
}

// procCount decodes a process count sent as uint16.
func procCount(v uint16) int {
	if v == 0 {
		return MaxProcesses
	}
	return int(v)
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
