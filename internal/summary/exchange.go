package summary

import (
	"sync"
	"sync/atomic"
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
	// absent marks the processes that have not joined the job (an
	// elastic one): nothing is sent to them, and nothing awaited.
	absent []atomic.Bool
	// back holds, per process whose slot a new process took again, a
	// channel closed once the network reaches the new process; renew
	// holds it for the sender, which asks the network for the new
	// process's channel (and stops counting it absent) once it closes.
	back  []chan (<-chan struct{})
	renew []atomic.Pointer[<-chan struct{}]
}

// Start starts exchanging summaries on channel ch of nw: local returns
// this process's current message (Process and Seq are filled in), sent
// every interval and at each Kick; notify, if not nil, is called with
// every newer message from a peer, on that peer's receiving goroutine.
func Start(nw transport.Network, ch uint32, every time.Duration, local func() Message, notify func(Message)) *Exchange {
	return StartAbsent(nw, ch, every, nil, local, notify)
}

// StartAbsent starts an exchange, as Start does, in which the processes
// absent have not joined yet: they count as gone until Join.
func StartAbsent(nw transport.Network, ch uint32, every time.Duration, absent []int, local func() Message, notify func(Message)) *Exchange {
	x := &Exchange{net: nw, ch: ch, board: NewBoard(nw.Processes()), local: local, notify: notify,
		kick: make(chan struct{}, 1), final: make(chan struct{}), sent: make(chan struct{}),
		absent: make([]atomic.Bool, nw.Processes()), back: make([]chan (<-chan struct{}), nw.Processes()),
		renew: make([]atomic.Pointer[<-chan struct{}], nw.Processes())}
	for p := range x.back {
		x.back[p] = make(chan (<-chan struct{}), 1)
	}
	for _, p := range absent {
		x.absent[p].Store(true)
		x.board.Gone(p)
	}
	for p := range nw.Processes() {
		if p != nw.Self() {
			go x.receive(p)
		}
	}
	go x.send(every)
	return x
}

// Join takes process p in: it joined the job, so it is sent this
// process's messages and its own are awaited.
func (x *Exchange) Join(p int) {
	x.board.Back(p)
	x.absent[p].Store(false)
	x.Kick()
}

// Rejoin takes in the new process in the slot of process p, which left:
// once ready closes (the network reaches the new process), it is sent
// this process's messages, and its own, numbered from the start again,
// are awaited.
func (x *Exchange) Rejoin(p int, ready <-chan struct{}) {
	x.board.Taken(p)
	x.renew[p].Store(&ready)
	x.back[p] <- ready
	x.Kick()
}

// Board returns the peers' newest messages.
func (x *Exchange) Board() *Board { return x.board }

// kickGap is the shortest time between two messages a Kick sends.
const kickGap = 100 * time.Millisecond

// Kick sends this process's message now, or once kickGap has passed
// since the last one.
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
	deadline := time.Now().Add(timeout)
	<-x.sent
	for !x.board.Settled(x.net.Self()) && time.Now().Before(deadline) {
		select {
		case <-x.net.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (x *Exchange) send(every time.Duration) {
	defer close(x.sent)
	senders := make([]transport.Sender, x.net.Processes())
	failed := make([]bool, len(senders))
	var seq uint64
	broadcast := func(final bool) {
		seq++
		m := x.local()
		m.Process, m.Seq, m.Final = x.net.Self(), seq, final
		for p := range senders {
			if c := x.renew[p].Load(); c != nil {
				select {
				case <-*c: // the slot's new process: ask anew
					x.renew[p].CompareAndSwap(c, nil)
					senders[p], failed[p] = nil, false
					x.absent[p].Store(false)
				default:
					continue // not reached yet
				}
			}
			if p == x.net.Self() || failed[p] || x.absent[p].Load() {
				continue
			}
			if senders[p] == nil {
				senders[p] = x.net.Sender(x.ch, p)
			}
			s := senders[p]
			if err := s.Send(Encode(s.Buffer(), m)); err != nil {
				failed[p] = true // gone or failed: the network says why
			}
		}
	}
	t := time.NewTicker(every)
	defer t.Stop()
	// A kick sends at once, or, within kickGap of the last send, at the
	// end of the gap: kicks at every epoch end send no more often.
	gap := min(every, kickGap)
	var last time.Time
	var due <-chan time.Time
	send := func() {
		last, due = time.Now(), nil
		broadcast(false)
	}
	for {
		select {
		case <-t.C:
			send()
		case <-x.kick:
			if wait := gap - time.Since(last); wait <= 0 {
				send()
			} else if due == nil {
				due = time.After(wait)
			}
		case <-due:
			send()
		case <-x.final:
			broadcast(true)
			return
		case <-x.net.Done():
			return
		}
	}
}

// receive keeps the messages of process p, and of each process that
// takes its slot again after it left.
func (x *Exchange) receive(p int) {
	for {
		x.receiveOne(p)
		x.board.Gone(p)
		select {
		case ready := <-x.back[p]:
			select {
			case <-ready:
			case <-x.net.Done():
				return
			}
			x.board.Renew(p)
		case <-x.net.Done():
			return
		}
	}
}

// receiveOne keeps the messages of the process in slot p until its
// channel ends.
func (x *Exchange) receiveOne(p int) {
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
