package transport

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// link carries one process's channel traffic to one peer: over a TCP
// connection (peer) or by hand within the process (localLink).
type link interface {
	// transmit delivers data frame seq of channel ch. It takes ownership
	// of p, also when it fails.
	transmit(ch uint32, seq uint64, p []byte) error
	// grant gives n credits of channel ch back to the peer's sender.
	grant(ch uint32, n int)
}

// mux is what both implementations of Network share: the channel tables,
// one per process, and the stop state. A table is replaced only in an
// elastic mesh, when the process in its slot left (see elastic.go).
type mux struct {
	self, procs, credits int
	tables               []atomic.Pointer[table]
	done                 chan struct{}

	mu  sync.Mutex
	err error
}

func newMux(self, procs, credits int) *mux {
	return &mux{self: self, procs: procs, credits: credits, tables: make([]atomic.Pointer[table], procs), done: make(chan struct{})}
}

// setTable installs the table of process i, reached through l.
func (m *mux) setTable(i int, addr string, l link, grantBatch int) {
	t := m.newTable(i, addr, grantBatch)
	t.attach(l)
	m.tables[i].Store(t)
}

// newTable returns a table for process i that no link reaches yet: its
// senders wait in Send until attach.
func (m *mux) newTable(i int, addr string, grantBatch int) *table {
	return &table{m: m, peer: i, addr: addr, batch: grantBatch, up: make(chan struct{}),
		out: map[uint32]*sender{}, in: map[uint32]*receiver{}}
}

// table returns the current table of process i.
func (m *mux) table(i int) *table { return m.tables[i].Load() }

// stop records why the network stopped and closes done. It reports
// whether it was the first call.
func (m *mux) stop(err error) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return false
	}
	m.err = err
	close(m.done)
	return true
}

func (m *mux) Processes() int        { return m.procs }
func (m *mux) Self() int             { return m.self }
func (m *mux) Done() <-chan struct{} { return m.done }

func (m *mux) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

func (m *mux) Sender(ch uint32, to int) Sender {
	if to < 0 || to >= m.procs {
		panic(fmt.Sprintf("transport: Sender(%d, %d): no process %d of %d", ch, to, to, m.procs))
	}
	return m.table(to).sender(ch)
}

func (m *mux) Receiver(ch uint32, from int) Receiver {
	if from < 0 || from >= m.procs {
		panic(fmt.Sprintf("transport: Receiver(%d, %d): no process %d of %d", ch, from, from, m.procs))
	}
	return m.table(from).receiver(ch)
}

// table holds the channels to and from one peer, created on first use by
// either side.
type table struct {
	m     *mux
	peer  int
	addr  string
	link  link          // set once, before up is closed
	up    chan struct{} // closed once link is set
	batch int           // credits a receiver returns at once

	mu     sync.Mutex
	out    map[uint32]*sender
	in     map[uint32]*receiver
	closed error // the peer shut down in order

	counts peerCounts
}

// attach sets the link that reaches the peer, once, and wakes the
// senders that wait for it.
func (t *table) attach(l link) {
	t.link = l
	close(t.up)
}

// linked reports whether attach was called.
func (t *table) linked() bool {
	select {
	case <-t.up:
		return true
	default:
		return false
	}
}

func (t *table) sender(ch uint32) *sender {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.out[ch]
	if s == nil {
		s = &sender{t: t, ch: ch, credits: t.m.credits, closed: t.closed, wake: make(chan struct{}, 1), size: 4096}
		t.out[ch] = s
	}
	return s
}

func (t *table) receiver(ch uint32) *receiver {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.in[ch]
	if r == nil {
		r = &receiver{t: t, ch: ch, q: ring{buf: make([][]byte, t.m.credits)}, next: 1,
			eof: t.closed != nil, wake: make(chan struct{}, 1)}
		t.in[ch] = r
	}
	return r
}

// peerClosed records that the peer shut down in order: its senders fail,
// its receivers end after what is queued.
func (t *table) peerClosed() {
	t.mu.Lock()
	if t.closed != nil {
		t.mu.Unlock()
		return
	}
	t.closed = &PeerError{Peer: t.peer, Addr: t.addr, Err: ErrPeerClosed}
	out := make([]*sender, 0, len(t.out))
	for _, s := range t.out {
		out = append(out, s)
	}
	in := make([]*receiver, 0, len(t.in))
	for _, r := range t.in {
		in = append(in, r)
	}
	t.mu.Unlock()
	for _, s := range out {
		s.mu.Lock()
		s.closed = t.closed
		s.mu.Unlock()
		notify(s.wake)
	}
	for _, r := range in {
		r.mu.Lock()
		r.eof = true
		r.mu.Unlock()
		notify(r.wake)
	}
}

// notify wakes the one goroutine that may wait on c (capacity 1).
func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// sender implements Sender.
type sender struct {
	t  *table
	ch uint32

	mu      sync.Mutex
	credits int    // frames the receiver has room for
	seq     uint64 // sequence number of the last frame sent
	closed  error
	wake    chan struct{}

	size int // capacity of the next Buffer; used by the sending goroutine only
	// waited is the time Send spent waiting for credit, in nanoseconds.
	waited atomic.Int64
}

// CreditWait returns the time Send has spent waiting for credit so far,
// in nanoseconds.
func (s *sender) CreditWait() int64 { return s.waited.Load() }

func (s *sender) Buffer() []byte { return getBuf(s.size)[:0] }

func (s *sender) Send(p []byte) error {
	if len(p) > MaxPayload {
		putBuf(p)
		return fmt.Errorf("transport: channel %d to process %d: payload of %d bytes exceeds the maximum %d",
			s.ch, s.t.peer, len(p), MaxPayload)
	}
	s.size = max(s.size, len(p))
	done := s.t.m.done
	if !s.t.linked() { // an elastic mesh's slot that no process has taken yet
		select {
		case <-s.t.up:
		case <-done:
			putBuf(p)
			return s.t.m.Err()
		}
	}
	var since time.Time // when Send began to wait for credit
	for {
		select {
		case <-done:
			putBuf(p)
			return s.t.m.Err()
		default:
		}
		s.mu.Lock()
		if s.closed != nil {
			err := s.closed
			s.mu.Unlock()
			putBuf(p)
			return err
		}
		if s.credits > 0 {
			// Transmit under the lock: frames leave in sequence order
			// even if the Sender is misused by two goroutines.
			s.credits--
			s.seq++
			n := len(p)
			err := s.t.link.transmit(s.ch, s.seq, p)
			s.mu.Unlock()
			var waited time.Duration
			if !since.IsZero() {
				waited = time.Since(since)
				s.waited.Add(int64(waited))
			}
			s.t.counts.sent(n, waited)
			return err
		}
		s.mu.Unlock()
		if since.IsZero() {
			since = time.Now()
		}
		select {
		case <-s.wake:
		case <-done:
		}
	}
}

// addCredits takes n credits granted by the receiver.
func (s *sender) addCredits(n int) error {
	s.mu.Lock()
	if s.credits+n > s.t.m.credits {
		c := s.credits
		s.mu.Unlock()
		return fmt.Errorf("channel %d: %d credits granted on top of %d exceed the %d per channel",
			s.ch, n, c, s.t.m.credits)
	}
	s.credits += n
	s.mu.Unlock()
	notify(s.wake)
	return nil
}

// receiver implements Receiver.
type receiver struct {
	t  *table
	ch uint32

	mu   sync.Mutex
	q    ring   // never longer than the credits granted
	next uint64 // sequence number of the next frame due
	eof  bool
	wake chan struct{}

	// Used by the receiving goroutine only.
	cur     []byte
	held    bool // cur awaits Release
	pending int  // released credits not yet granted back
}

// deliver queues data frame seq. It fails on a sequence gap or repeat,
// and on a frame beyond the credits granted.
func (r *receiver) deliver(seq uint64, p []byte) error {
	r.mu.Lock()
	if seq != r.next {
		want := r.next
		r.mu.Unlock()
		return fmt.Errorf("channel %d: frame %d where %d was due", r.ch, seq, want)
	}
	if !r.q.push(p) {
		r.mu.Unlock()
		return fmt.Errorf("channel %d: frame %d exceeds the %d credits granted", r.ch, seq, len(r.q.buf))
	}
	r.next++
	r.mu.Unlock()
	r.t.counts.received(len(p))
	notify(r.wake)
	return nil
}

func (r *receiver) Recv() ([]byte, error) {
	r.Release()
	done := r.t.m.done
	for {
		select {
		case <-done:
			return nil, r.t.m.Err()
		default:
		}
		r.mu.Lock()
		p, ok := r.q.pop()
		eof := r.eof
		r.mu.Unlock()
		if ok {
			r.cur, r.held = p, true
			return p, nil
		}
		if eof {
			return nil, io.EOF
		}
		select {
		case <-r.wake:
		case <-done:
		}
	}
}

func (r *receiver) Release() {
	if !r.held {
		return
	}
	putBuf(r.cur)
	r.cur, r.held = nil, false
	r.pending++
	if r.pending >= r.t.batch {
		r.t.link.grant(r.ch, r.pending)
		r.pending = 0
	}
}

// ring is a fixed-capacity FIFO of payloads.
type ring struct {
	buf     [][]byte
	head, n int
}

func (q *ring) push(p []byte) bool {
	if q.n == len(q.buf) {
		return false
	}
	q.buf[(q.head+q.n)%len(q.buf)] = p
	q.n++
	return true
}

func (q *ring) pop() ([]byte, bool) {
	if q.n == 0 {
		return nil, false
	}
	p := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	return p, true
}
