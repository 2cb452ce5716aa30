package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/weirstream/weir/internal/bin"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/transport"
)

// roundsChannel is the transport channel of the micro-batch rounds'
// posts (the summaries use 0xFFFFFFFF, the handovers 0xFFFFFFFE, the
// source notes 0xFFFFFFFD, the joins 0xFFFFFFFC).
const roundsChannel = 0xFFFFFFFB

// roundPosts carries the micro-batch rounds' posts between the processes
// of a job (dataflow.RoundPosts): a post is a round's messages for one
// process, sent as pieces and an end, and held here by (operator, epoch,
// process) until the round takes it.
type roundPosts struct {
	net  transport.Network
	done <-chan struct{}
	send []sync.Mutex // per process

	mu      sync.Mutex
	box     map[roundKey]*roundPost
	closed  map[int]bool  // processes whose channel ended
	arrived chan struct{} // closed and replaced at each completed post or close
}

type roundKey struct {
	op    string
	epoch uint64
	from  int
}

type roundPost struct {
	msgs     [][]byte
	complete bool
}

const (
	roundPiece byte = iota
	roundEnd
)

// newRoundPosts makes the posts of a job of several processes and the
// listeners that receive them.
func newRoundPosts(rt *runtime.Runtime, net transport.Network) *roundPosts {
	r := &roundPosts{net: net, done: rt.Done(), send: make([]sync.Mutex, net.Processes()),
		box: map[roundKey]*roundPost{}, closed: map[int]bool{}, arrived: make(chan struct{})}
	for p := range net.Processes() {
		if p == net.Self() {
			continue
		}
		rt.AddListener(fmt.Sprintf("rounds-from-%d", p), func(<-chan struct{}) error {
			rc := net.Receiver(roundsChannel, p)
			for {
				msg, err := rc.Recv()
				if errors.Is(err, io.EOF) {
					r.peerClosed(p)
					return nil
				}
				if err != nil {
					return nil // the network says why, if it failed
				}
				if err := r.receive(p, msg); err != nil {
					return err
				}
				rc.Release()
			}
		}, nil)
	}
	return r
}

func (r *roundPosts) Post(to int, op string, epoch uint64, msgs [][]byte) error {
	r.send[to].Lock()
	defer r.send[to].Unlock()
	s := r.net.Sender(roundsChannel, to)
	for _, m := range msgs {
		if err := s.Send(append(roundHeader(s.Buffer(), roundPiece, op, epoch), m...)); err != nil {
			return fmt.Errorf("weir: %s: the round of epoch %d to process %d: %w", op, epoch, to, err)
		}
	}
	if err := s.Send(roundHeader(s.Buffer(), roundEnd, op, epoch)); err != nil {
		return fmt.Errorf("weir: %s: the round of epoch %d to process %d: %w", op, epoch, to, err)
	}
	return nil
}

func (r *roundPosts) Take(from int, op string, epoch uint64) ([][]byte, error) {
	k := roundKey{op, epoch, from}
	for {
		r.mu.Lock()
		if p := r.box[k]; p != nil && p.complete {
			delete(r.box, k)
			r.mu.Unlock()
			return p.msgs, nil
		}
		closed, ch := r.closed[from], r.arrived
		r.mu.Unlock()
		if closed {
			return nil, fmt.Errorf("weir: %s: process %d ended before its round of epoch %d", op, from, epoch)
		}
		select {
		case <-ch:
		case <-r.done:
			return nil, errors.New("weir: job stopping")
		}
	}
}

func roundHeader(b []byte, kind byte, op string, epoch uint64) []byte {
	b = append(b, kind)
	b = appendString(b, op)
	return binary.AppendUvarint(b, epoch)
}

// receive takes one message from process from.
func (r *roundPosts) receive(from int, msg []byte) error {
	d := bin.Decoder{B: msg}
	kind, op, epoch := d.Byte(), d.String(), d.Uvarint()
	if d.Err == nil && kind > roundEnd {
		d.Err = fmt.Errorf("kind %d", kind)
	}
	if d.Err != nil {
		return fmt.Errorf("weir: a round's post from process %d: %w", from, d.Err)
	}
	k := roundKey{op, epoch, from}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.box[k]
	if p == nil {
		p = &roundPost{}
		r.box[k] = p
	}
	if kind == roundPiece {
		p.msgs = append(p.msgs, append([]byte(nil), d.B...)) // msg's buffer goes back to the pool
		return nil
	}
	p.complete = true
	close(r.arrived)
	r.arrived = make(chan struct{})
	return nil
}

// peerClosed notes that process p's channel ended: a post of it that has
// not come never will.
func (r *roundPosts) peerClosed(p int) {
	r.mu.Lock()
	r.closed[p] = true
	close(r.arrived)
	r.arrived = make(chan struct{})
	r.mu.Unlock()
}
