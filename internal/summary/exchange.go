package summary

import (
	"slices"
	"sync"
	"time"

	"github.com/weirstream/weir/internal/transport"
)

// Exchange sends this process's summary to every peer and keeps theirs.
type Exchange struct {
	net    transport.Network
	ch     uint32
	board  *Board
	local  func() Message
	notify func(Message)
	kick   chan struct{}
	final  chan struct{}
	sent   chan struct{} // closed once the final message is sent (or cannot be)
	once   sync.Once
}

// Start starts exchanging summaries on channel ch of nw: local returns
// this process's current message (Process and Seq are filled in), sent
// every interval and at each Kick; notify, if not nil, is called with
// every newer message from a peer, on that peer's receiving goroutine.
func Start(nw transport.Network, ch uint32, every time.Duration, local func() Message, notify func(Message)) *Exchange {
	x := &Exchange{net: nw, ch: ch, board: NewBoard(nw.Processes()), local: local, notify: notify,
		kick: make(chan struct{}, 1), final: make(chan struct{}), sent: make(chan struct{})}
	for p := range nw.Processes() {
		if p != nw.Self() {
			go x.receive(p)
		}
	}
	go x.send(every)
	return x
}

// Board returns the peers' newest messages.
func (x *Exchange) Board() *Board { return x.board }

// Kick sends this process's message now.
func (x *Exchange) Kick() {
	select {
	case x.kick <- struct{}{}:
	default:
	}
}

// Finish sends this process's final message and waits, at most timeout,
// until every peer has sent its final message or is gone.
func (x *Exchange) Finish(timeout time.Duration) {
	x.once.Do(func() { close(x.final) })
	<-x.sent
	waitSettled(x.net, timeout, func() bool { return x.board.Settled(x.net.Self()) })
}

// waitSettled waits, at most timeout, until settled reports true or the
// network stops.
func waitSettled(nw transport.Network, timeout time.Duration, settled func() bool) {
	deadline := time.Now().Add(timeout)
	for !settled() && time.Now().Before(deadline) {
		select {
		case <-nw.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (x *Exchange) send(every time.Duration) {
	defer close(x.sent)
	senders := make([]transport.Sender, x.net.Processes())
	for p := range senders {
		if p != x.net.Self() {
			senders[p] = x.net.Sender(x.ch, p)
		}
	}
	var seq uint64
	broadcast := func(final bool) {
		seq++
		m := x.local()
		m.Process, m.Seq, m.Final = x.net.Self(), seq, final
		for p, s := range senders {
			if s == nil {
				continue
			}
			if err := s.Send(Encode(s.Buffer(), m)); err != nil {
				senders[p] = nil // gone or failed: the network says why
			}
		}
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			broadcast(false)
		case <-x.kick:
			broadcast(false)
		case <-x.final:
			broadcast(true)
			return
		case <-x.net.Done():
			return
		}
	}
}

func (x *Exchange) receive(p int) {
	defer x.board.Gone(p)
	r := x.net.Receiver(x.ch, p)
	for {
		b, err := r.Recv()
		if err != nil {
			return
		}
		m, err := Decode(b)
		r.Release()
		if err != nil || m.Process != p {
			continue // not from this exchange: ignored
		}
		if x.board.Post(m) && x.notify != nil {
			x.notify(m)
		}
	}
}

// Feed sends this process's figures, opaque bytes, to every peer on a
// channel of its own: when kicked, at most once per interval, and once
// more, final, at Finish. Every message from a peer goes to post, which
// reports whether it was that peer's final one.
type Feed struct {
	net   transport.Network
	ch    uint32
	every time.Duration
	local func(final bool) []byte
	post  func(from int, b []byte) (final bool)
	kick  chan struct{}
	final chan struct{}
	sent  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	ended []bool // per peer: final received, or gone
}

// StartFeed starts a feed on channel ch of nw.
func StartFeed(nw transport.Network, ch uint32, every time.Duration, local func(final bool) []byte, post func(from int, b []byte) bool) *Feed {
	f := &Feed{net: nw, ch: ch, every: every, local: local, post: post, kick: make(chan struct{}, 1),
		final: make(chan struct{}), sent: make(chan struct{}), ended: make([]bool, nw.Processes())}
	f.ended[nw.Self()] = true
	for p := range nw.Processes() {
		if p != nw.Self() {
			go f.receive(p)
		}
	}
	go f.send()
	return f
}

// Kick asks for this process's figures to be sent: now, or once the
// interval since the last send has passed.
func (f *Feed) Kick() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// Finish sends the final figures and waits, at most timeout, until every
// peer has sent its final figures or is gone.
func (f *Feed) Finish(timeout time.Duration) {
	f.once.Do(func() { close(f.final) })
	<-f.sent
	waitSettled(f.net, timeout, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return !slices.Contains(f.ended, false)
	})
}

func (f *Feed) send() {
	defer close(f.sent)
	senders := make([]transport.Sender, f.net.Processes())
	for p := range senders {
		if p != f.net.Self() {
			senders[p] = f.net.Sender(f.ch, p)
		}
	}
	var last time.Time
	broadcast := func(final bool) {
		last = time.Now()
		b := f.local(final)
		for p, s := range senders {
			if s != nil && s.Send(append(s.Buffer(), b...)) != nil {
				senders[p] = nil // gone or failed: the network says why
			}
		}
	}
	var due <-chan time.Time
	for {
		select {
		case <-f.kick:
			if due == nil {
				due = time.After(f.every - time.Since(last))
			}
		case <-due:
			due = nil
			broadcast(false)
		case <-f.final:
			broadcast(true)
			return
		case <-f.net.Done():
			return
		}
	}
}

func (f *Feed) receive(p int) {
	defer f.end(p)
	r := f.net.Receiver(f.ch, p)
	for {
		b, err := r.Recv()
		if err != nil {
			return
		}
		final := f.post(p, b)
		r.Release()
		if final {
			f.end(p)
		}
	}
}

func (f *Feed) end(p int) {
	f.mu.Lock()
	f.ended[p] = true
	f.mu.Unlock()
}
