package engine

import (
	"encoding/binary"
	"fmt"

	"github.com/weirstream/weir/internal/bin"
	"github.com/weirstream/weir/internal/runtime"
)

// splitsChannel is the transport channel that carries the notes of
// source shares between processes (the summaries use 0xFFFFFFFF, the
// key-group handovers 0xFFFFFFFE).
const splitsChannel = 0xFFFFFFFD

// The messages of the splits channel:
//
//	1 (note): source, table epoch, share, shares (uvarints but the
//	  source, a length-prefixed string), ended (a byte), position
//	  (length-prefixed), watermarks (a count, then each operator's name
//	  and its watermark as a varint)
//	2 (close): the sending process's source instances have all ended
const (
	msgNote       = 1
	msgSplitClose = 2
	// maxNote bounds a note's position and its operator names.
	maxNote = 1 << 24
)

// listen starts, for each peer, the service that files the notes it
// sends, until it says its source instances have ended.
func (s *splits) listen(rt *runtime.Runtime) {
	for p := range s.pl.procs {
		if p == s.pl.self {
			continue
		}
		rt.AddService(fmt.Sprintf("splits-from-%d", p), s.slots.serve(p, func(done <-chan struct{}) error {
			r := s.net.Receiver(splitsChannel, p)
			// What a process that joined, or took p's slot again, did not
			// hear: the notes filed so far, and whether this process's
			// readers have all ended (after them).
			s.resend(p)
			s.joined(p, false)
			for {
				msg, err := r.Recv()
				if err != nil {
					return nil // the network says why, if it failed
				}
				if len(msg) == 1 && msg[0] == msgSplitClose {
					return nil
				}
				k, n, err := decodeNote(msg)
				if err != nil {
					return fmt.Errorf("weir: a source share's note from process %d: %w", p, err)
				}
				if src := s.sources[k.source]; src == nil || k.share >= src.par || n.shares > src.par {
					return fmt.Errorf("weir: process %d sent a note of share %d of %d of source %q, which this process does not move", p, k.share, n.shares, k.source)
				}
				s.box.put(k, n)
				r.Release()
			}
		}))
	}
}

// broadcast sends a note to every peer.
func (s *splits) broadcast(k noteKey, n shareNote) {
	if s.net == nil {
		return
	}
	for p := range s.pl.procs {
		if p == s.pl.self || !s.slots.present(p) {
			continue
		}
		s.sendMu[p].Lock()
		if !s.gone[p] && s.reach(p) {
			snd := s.net.Sender(splitsChannel, p)
			// An error means the network failed or closed, and says why.
			_ = snd.Send(appendNote(snd.Buffer(), k, n))
		}
		s.sendMu[p].Unlock()
	}
}

// leaves tells process p, which leaves the job, that this one files it
// no more notes (it takes no share over), and sends it none from now on,
// so that p's listener ends before the job does.
func (s *splits) leaves(p int) {
	if s.net == nil || p == s.pl.self || len(s.sources) == 0 {
		return
	}
	s.sendMu[p].Lock()
	defer s.sendMu[p].Unlock()
	if s.gone[p] || !s.reach(p) {
		return
	}
	s.gone[p] = true
	snd := s.net.Sender(splitsChannel, p)
	_ = snd.Send(append(snd.Buffer(), msgSplitClose))
}

// ended notes that an instance of a movable source has ended; after the
// last, the peers hear that this process files no more notes.
func (s *splits) ended() error {
	if s.live.Add(-1) > 0 || s.net == nil {
		return nil
	}
	for p := range s.pl.procs {
		if p != s.pl.self && s.slots.present(p) && s.closeTo(p) != nil {
			return nil
		}
	}
	return nil
}

// closeTo tells process p that this one files no more notes.
func (s *splits) closeTo(p int) error {
	s.sendMu[p].Lock()
	defer s.sendMu[p].Unlock()
	if s.gone[p] || !s.reach(p) {
		return nil
	}
	snd := s.net.Sender(splitsChannel, p)
	return snd.Send(append(snd.Buffer(), msgSplitClose))
}

// resend sends process p, which joined the job (or took its slot again),
// every note filed here so far: a reader that ended before p joined told
// only the processes present then, and p's readers wait for the notes of
// the shares they take over (repeats change nothing).
func (s *splits) resend(p int) {
	s.box.mu.Lock()
	keys := make([]noteKey, 0, len(s.box.notes))
	notes := make([]shareNote, 0, len(s.box.notes))
	for k, n := range s.box.notes {
		keys, notes = append(keys, k), append(notes, n)
	}
	s.box.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	s.sendMu[p].Lock()
	defer s.sendMu[p].Unlock()
	if s.gone[p] || !s.reach(p) {
		return
	}
	snd := s.net.Sender(splitsChannel, p)
	for i, k := range keys {
		if snd.Send(appendNote(snd.Buffer(), k, notes[i])) != nil {
			return // the network failed or closed, and says why
		}
	}
}

// joined tells process p, which joined the job, that this process files
// no notes, if its movable source instances have all ended. For a
// process that took p's slot again, it forgets that it told the one
// before so; the notes service tells it once the network reaches it.
func (s *splits) joined(p int, again bool) {
	if s.net == nil || p == s.pl.self {
		return
	}
	if again {
		s.sendMu[p].Lock()
		delete(s.gone, p)
		s.sendMu[p].Unlock()
		return
	}
	if len(s.sources) > 0 && s.live.Load() == 0 {
		_ = s.closeTo(p)
	}
}

// reach waits until the network reaches the newest process of slot p
// known here (it may have taken the slot again); false: the run ended.
func (s *splits) reach(p int) bool {
	select {
	case <-s.slots.current(p):
		return true
	case <-s.done:
		return false
	}
}

func appendNote(b []byte, k noteKey, n shareNote) []byte {
	b = append(b, msgNote)
	b = appendString(b, k.source)
	for _, v := range []uint64{k.from, uint64(k.share), uint64(n.shares)} {
		b = binary.AppendUvarint(b, v)
	}
	ended := byte(0)
	if n.ended {
		ended = 1
	}
	b = append(b, ended)
	b = binary.AppendUvarint(b, uint64(len(n.pos)))
	b = append(b, n.pos...)
	b = binary.AppendUvarint(b, uint64(len(n.wms)))
	for _, w := range n.wms {
		b = appendString(b, w.op)
		b = binary.AppendVarint(b, w.wm)
	}
	return b
}

func decodeNote(msg []byte) (noteKey, shareNote, error) {
	d := bin.Decoder{B: msg}
	var k noteKey
	var n shareNote
	bytes := func() []byte {
		l := d.Int(maxNote)
		if d.Err != nil || l > int64(len(d.B)) {
			d.Fail()
			return nil
		}
		out := append([]byte(nil), d.B[:l]...)
		d.B = d.B[l:]
		return out
	}
	if d.Byte() != msgNote {
		d.Fail()
	}
	k.source = string(bytes())
	k.from, k.share, n.shares = d.Uvarint(), int(d.Int(1<<16)), int(d.Int(1<<16+1))
	switch d.Byte() {
	case 0:
	case 1:
		n.ended = true
	default:
		d.Fail()
	}
	n.pos = bytes()
	for range d.Int(1 << 10) {
		if d.Err != nil {
			break
		}
		n.wms = append(n.wms, opWatermark{op: string(bytes()), wm: d.Varint()})
	}
	if d.Err == nil && (len(d.B) != 0 || n.shares < 1 || k.share >= n.shares) {
		d.Fail()
	}
	if d.Err != nil {
		return k, n, fmt.Errorf("a corrupt note of %d bytes", len(msg))
	}
	return k, n, nil
}
