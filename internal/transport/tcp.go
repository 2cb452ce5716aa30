package transport

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

const (
	readBufSize = 64 << 10               // bytes read from a connection at once
	copyMax     = 8 << 10                // payloads up to this size are copied into the write buffer
	abortGrace  = 500 * time.Millisecond // for the close frames of a failed network
	queueCap    = 64                     // initial capacity of a writer's queues
	maxWrite    = 256 << 10              // bytes of one write, about
)

// tcpNetwork is the Network of Dial: one connection per peer.
type tcpNetwork struct {
	*mux
	cfg    Config
	log    *slog.Logger
	peers  []*peer  // a fixed mesh's, by index (nil at Self)
	el     *elastic // an elastic mesh's membership, which holds its peers
	kill   chan struct{}
	killer sync.Once
	once   sync.Once
	wg     sync.WaitGroup
}

// peer is the connection to one peer, with its reader and writer.
type peer struct {
	n    *tcpNetwork
	idx  int
	addr string
	conn net.Conn
	co   *coalescer // under conn if it is TLS
	t    *table     // the channels to and from the peer
	inc  uint64     // an elastic mesh's peer: its incarnation

	wmu   sync.Mutex
	q     []outFrame // frames queued for the writer
	ended bool       // a close frame was queued: nothing may follow
	wake  chan struct{}

	remoteClosed atomic.Bool   // the peer's close frame arrived
	readerDone   chan struct{} // closed when the reader returned
	writerDone   chan struct{} // closed when the writer returned

	// Used by the writer only.
	batch []outFrame
	buf   []byte
	iov   [][]byte
	bufs  net.Buffers
}

// outFrame is a frame queued for the writer.
type outFrame struct {
	kind    Kind
	ch      uint32
	seq     uint64
	credits uint32
	payload []byte
	reason  string // close frames
	note    note   // member frames
}

// newNetwork returns a network with a table for every process that no
// link reaches yet, but its own.
func newNetwork(cfg Config) *tcpNetwork {
	n := &tcpNetwork{mux: newMux(cfg.Self, len(cfg.Addrs), cfg.Credits), cfg: cfg, log: cfg.Logger,
		kill: make(chan struct{})}
	for i, addr := range cfg.Addrs {
		if i == cfg.Self {
			n.setTable(i, addr, localLink{from: n.mux, to: n.mux}, 1)
		} else {
			n.tables[i].Store(n.newTable(i, addr, n.grantBatch()))
		}
	}
	return n
}

// grantBatch is the number of credits a receiver returns at once.
func (n *tcpNetwork) grantBatch() int { return max(1, n.cfg.Credits/4) }

// newTCP starts the readers and writers over the connections of a
// complete mesh (conns[Self] is nil).
func newTCP(cfg Config, conns []net.Conn) *tcpNetwork {
	n := newNetwork(cfg)
	n.peers = make([]*peer, len(conns))
	for i, c := range conns {
		if i != cfg.Self {
			n.peers[i] = n.newPeer(i, c, n.table(i))
		}
	}
	for _, p := range n.all() {
		p.start()
	}
	return n
}

// newPeer returns the peer of process i over c, whose channels are t,
// before it starts.
func (n *tcpNetwork) newPeer(i int, c net.Conn, t *table) *peer {
	return &peer{n: n, idx: i, addr: n.cfg.Addrs[i], conn: c, co: coalescerOf(c), t: t, wake: make(chan struct{}, 1),
		readerDone: make(chan struct{}), writerDone: make(chan struct{}),
		q: make([]outFrame, 0, queueCap), batch: make([]outFrame, 0, queueCap)}
}

// start links the peer's table to it and starts its reader and writer.
func (p *peer) start() {
	p.t.attach(p)
	p.n.wg.Add(2)
	go p.read()
	go p.write()
}

// all returns the peers whose readers or writers may run.
func (n *tcpNetwork) all() []*peer {
	if n.el != nil {
		return n.el.live()
	}
	ps := make([]*peer, 0, len(n.peers))
	for _, p := range n.peers {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// halt stops an elastic mesh's listening, dialing and handshakes, once
// the network stopped.
func (n *tcpNetwork) halt() {
	if n.el != nil {
		n.el.halt()
	}
}

// fail stops the network with err unless it stopped already, and tears
// the connections down. Before that, it tells every peer why in a close
// frame, giving the writers a moment to send it.
func (n *tcpNetwork) fail(err error) {
	if !n.stop(err) {
		return
	}
	n.halt()
	n.log.Error(err.Error())
	reason := err.Error()
	if len(reason) > MaxReason {
		reason = reason[:MaxReason]
	}
	for _, p := range n.all() {
		p.end(reason)
	}
	n.wg.Add(1) // fail is called by readers and writers: the count is not 0
	go func() {
		defer n.wg.Done()
		n.teardownAfter(min(n.cfg.Timeout, abortGrace), func(p *peer) <-chan struct{} { return p.writerDone })
	}()
}

// teardownAfter waits until the channel that of returns for each peer is
// closed, or d passed, then tears down.
func (n *tcpNetwork) teardownAfter(d time.Duration, of func(p *peer) <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	defer n.teardown()
	for _, p := range n.all() {
		select {
		case <-of(p):
		case <-t.C:
			return
		}
	}
}

// teardown stops the readers and writers by closing the connections.
func (n *tcpNetwork) teardown() {
	n.killer.Do(func() {
		close(n.kill)
		for _, p := range n.all() {
			p.conn.Close()
		}
	})
}

func (n *tcpNetwork) Abort(reason error) {
	n.fail(reason)
	n.wg.Wait()
}

func (n *tcpNetwork) Close() error {
	n.once.Do(func() {
		if n.stop(ErrClosed) {
			n.halt()
			n.shutdown()
		} // else the failure tears down
		n.wg.Wait()
	})
	if err := n.Err(); err != ErrClosed {
		return err
	}
	return nil
}

// shutdown sends every peer a close frame, then waits (at most Timeout)
// for their answers, so that no reset destroys what is in flight.
func (n *tcpNetwork) shutdown() {
	for _, p := range n.all() {
		p.end("")
	}
	n.teardownAfter(n.cfg.Timeout, func(p *peer) <-chan struct{} { return p.readerDone })
}

// enqueue queues f for the writer. It fails once a close frame was
// queued, taking ownership of f's payload.
func (p *peer) enqueue(f outFrame) error {
	p.wmu.Lock()
	if p.ended {
		p.wmu.Unlock()
		if f.payload != nil {
			putBuf(f.payload)
		}
		select {
		case <-p.n.done:
			return p.n.Err()
		default:
			return &PeerError{Peer: p.idx, Addr: p.addr, Err: ErrPeerClosed}
		}
	}
	p.q = append(p.q, f)
	p.wmu.Unlock()
	notify(p.wake)
	return nil
}

// end queues the close frame, the last frame of this connection, with
// the reason of a failure or "" for an orderly shutdown.
func (p *peer) end(reason string) {
	p.wmu.Lock()
	if !p.ended {
		p.q = append(p.q, outFrame{kind: KindClose, reason: reason})
		p.ended = true
	}
	p.wmu.Unlock()
	notify(p.wake)
}

func (p *peer) transmit(ch uint32, seq uint64, payload []byte) error {
	return p.enqueue(outFrame{kind: KindData, ch: ch, seq: seq, payload: payload})
}

func (p *peer) grant(ch uint32, n int) {
	p.enqueue(outFrame{kind: KindCredit, ch: ch, credits: uint32(n)}) // fails only when closed
}

// quiet reports whether I/O errors on this connection are expected now:
// the network stopped, or the peer said it closes.
func (p *peer) quiet() bool {
	select {
	case <-p.n.done:
		return true
	default:
		return p.remoteClosed.Load()
	}
}

// lost fails the network because of this connection, unless that is
// expected.
func (p *peer) lost(err error) {
	if !p.quiet() {
		p.n.fail(&PeerError{Peer: p.idx, Addr: p.addr, Err: err})
	}
}

// read decodes frames and dispatches them to the channels. It never
// blocks on a channel: credits bound every queue.
func (p *peer) read() {
	defer p.n.wg.Done()
	defer close(p.readerDone)
	d := Decoder{Alloc: getBuf, Elastic: p.n.el != nil}
	buf := getBuf(readBufSize)
	defer putBuf(buf)
	timeout := p.n.cfg.Timeout
	for {
		p.conn.SetReadDeadline(time.Now().Add(timeout))
		k, rerr := p.conn.Read(buf)
		for b := buf[:k]; len(b) > 0; {
			c, f, ok, err := d.Feed(b)
			b = b[c:]
			if err == nil && ok {
				err = p.dispatch(f)
			}
			if err != nil {
				p.n.fail(&PeerError{Peer: p.idx, Addr: p.addr, Err: err})
				return
			}
		}
		switch {
		case rerr == nil:
		case p.quiet():
			return
		case rerr == io.EOF:
			p.lost(errors.New("connection closed without a close frame"))
			return
		case errors.Is(rerr, os.ErrDeadlineExceeded):
			p.lost(fmt.Errorf("no heartbeat for %v", timeout))
			return
		default:
			p.lost(fmt.Errorf("connection lost: %w", rerr))
			return
		}
	}
}

// dispatch acts on one frame read from the peer.
func (p *peer) dispatch(f Frame) error {
	if int(f.Source) != p.idx || int(f.Target) != p.n.self {
		return fmt.Errorf("%v frame from process %d to %d", f.Kind, f.Source, f.Target)
	}
	t := p.t
	switch f.Kind {
	case KindData:
		return t.receiver(f.Channel).deliver(f.Seq, f.Payload)
	case KindCredit:
		if f.Credits > uint32(p.n.credits) {
			return fmt.Errorf("channel %d: %d credits granted exceed the %d per channel", f.Channel, f.Credits, p.n.credits)
		}
		return t.sender(f.Channel).addCredits(int(f.Credits))
	case KindClose:
		if len(f.Payload) > 0 {
			return fmt.Errorf("%w: %s", ErrPeerAborted, decodeReason(f.Payload))
		}
		p.remoteClosed.Store(true)
		t.peerClosed()
		if p.n.el != nil {
			p.n.el.left(p)
		}
		p.end("") // answer with our close frame
	case KindMember:
		n, _ := decodeNote(f.Payload) // checked by the decoder
		return p.n.el.heard(p, n)
	}
	return nil
}
