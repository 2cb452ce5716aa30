package transport

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"
)

// How an elastic mesh stays complete while processes join and leave:
//
//   - A process knows of the others from what it heard: the Members it
//     started with, and the member notes (note.go) of its peers. Each
//     side of a new connection sends the other a note for each process
//     it is connected to (the new peer aside), then a synced note; later,
//     a note for each process it connects to or that leaves it.
//   - Between two processes that know of each other, the lower index
//     dials the higher, as in a fixed mesh. The one exception is a
//     joiner's first connection: it dials a process of the running job
//     (Config.Join), whatever its index, with the hello's contact flag.
//   - So knowledge spreads along connections: if A and C are both
//     connected to B, the later of the two connections at B tells the
//     earlier one's process of the later one's in a note, and tells the
//     later one of the earlier in its first notes. The two then connect.
//     Processes that join at once, through different contacts, find each
//     other so, and no pair dials both ways.
//   - A slot holds one process at a time. Each run of a process has a
//     random incarnation, so that notes about a process that left are
//     not taken for its successor in the slot.
//   - Dial returns once every process this one heard of is connected,
//     and every peer's first notes have arrived (the joiner: after its
//     contact let it in).

// anyInc is the incarnation heard of a member that started together with
// this process (Config.Members): any.
const anyInc = ^uint64(0)

// elastic is the membership of an elastic TCP mesh: which process holds
// each slot, what this process heard of the others, and the loops that
// connect to them.
type elastic struct {
	n      *tcpNetwork
	cn     *connector
	lns    []net.Listener
	cancel context.CancelFunc // ends cn's context
	inc    uint64             // this process's incarnation
	ev     *events

	mu      sync.Mutex
	slots   []slot
	gone    map[uint64]bool // incarnations that left
	peers   map[*peer]bool  // started peers whose reader or writer may run
	halted  bool            // the network stopped: no more connections
	joining bool            // Config.Join: no contact has let us in yet
	contact *peer           // the contact that lets us in, until it synced
	seeking bool            // a dialer looks for a contact
	dialing bool            // Dial has not returned
	done    bool            // Dial's outcome is decided: settled or failed
	ready   bool            // Dial settled: our view of the mesh is complete
	owed    []*peer         // joiners we let in, owed a synced note until ready
	settled chan struct{}   // closed once Dial's view of the mesh is complete
	err     error           // why Dial fails
	failed  chan struct{}   // closed with err set
}

// slot is what this process knows of one slot.
type slot struct {
	p      *peer  // the process in the slot: claimed (handshaking), or up
	up     bool   // p's handshake completed: it runs
	synced bool   // p's first notes all arrived
	heard  uint64 // the incarnation heard present here, not connected yet; 0: none
	dialer bool   // a dialer runs for the slot
}

// missing reports whether slot i holds a process heard of that is not
// connected (under e.mu).
func (e *elastic) missing(i int) bool {
	s := &e.slots[i]
	return i != e.n.self && s.heard != 0 && !s.up
}

// claim reserves slot i for the connection c from the process of
// incarnation inc, before we say ok, and queues our first notes for it;
// a joiner that asked us to let it in (contact) gets the synced note only
// once our own view is complete. It refuses a process while another runs
// in the slot; a second connection from the same process (two joiners
// that chose each other as contacts) and a claim after halt fail without
// a refusal, so that the other side does not fail.
func (e *elastic) claim(i int, inc uint64, c net.Conn, contact bool) (*peer, *refusal, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.halted {
		return nil, nil, fmt.Errorf("process %d is shutting down", e.n.self)
	}
	s := &e.slots[i]
	switch {
	case s.p != nil && s.p.inc == inc:
		return nil, nil, fmt.Errorf("process %d is connected already", i)
	case s.p != nil:
		return nil, &refusal{
			log:  fmt.Sprintf("a second process claims slot %d, whose process runs", i),
			peer: fmt.Sprintf("slot %d is taken: its process runs", i),
		}, nil
	}
	p := e.n.newPeer(i, c, nil)
	p.inc = inc
	for j := range e.slots {
		if o := &e.slots[j]; o.up && j != i {
			p.enqueue(outFrame{kind: KindMember, note: note{op: noteJoined, slot: uint16(j), inc: o.p.inc}})
		}
	}
	if contact && !e.ready {
		e.owed = append(e.owed, p)
	} else {
		p.enqueue(outFrame{kind: KindMember, note: note{op: noteSynced}})
	}
	s.p, s.up, s.synced = p, false, false
	return p, nil, nil
}

// unclaim frees the slot of claim after a failed handshake.
func (e *elastic) unclaim(p *peer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := &e.slots[p.idx]; s.p == p && !s.up {
		s.p = nil
		e.maybeDial(p.idx)
	}
}

// confirm starts the claimed peer p once both sides said ok: it gets the
// slot's table, its peers a note, the user a Joined event. It reports
// false if the network stopped meanwhile.
func (e *elastic) confirm(p *peer, contact bool) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := &e.slots[p.idx]
	if e.halted || s.p != p {
		return false
	}
	s.up, s.heard = true, 0
	p.t = e.n.table(p.idx)
	e.peers[p] = true
	e.tell(note{op: noteJoined, slot: uint16(p.idx), inc: p.inc})
	p.start()
	e.n.wg.Add(1)
	go e.retire(p)
	e.ev.push(Event{Kind: Joined, Slot: p.idx})
	if contact && e.joining && e.contact == nil {
		e.contact = p // it let us in once its first notes arrived
	}
	e.check()
	return true
}

// tell queues n for every peer but the one it is about (under e.mu).
func (e *elastic) tell(n note) {
	for j := range e.slots {
		if o := e.slots[j].p; o != nil && j != int(n.slot) {
			o.enqueue(outFrame{kind: KindMember, note: n}) // fails only once o ended
		}
	}
}

// retire closes the connection of p once its reader and writer returned
// (it left, or the network stopped).
func (e *elastic) retire(p *peer) {
	defer e.n.wg.Done()
	<-p.readerDone
	<-p.writerDone
	p.conn.Close()
	e.mu.Lock()
	delete(e.peers, p)
	e.mu.Unlock()
}

// left frees the slot of p, which shut down in order (its close frame
// arrived and its channels ended): the slot gets a new table for its
// next process, the peers a note, the user a Left event.
func (e *elastic) left(p *peer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gone[p.inc] = true
	s := &e.slots[p.idx]
	if e.halted || s.p != p {
		return // we are closing: p answers our close frame
	}
	s.p, s.up, s.synced = nil, false, false
	if s.heard == p.inc {
		s.heard = 0
	}
	e.n.tables[p.idx].Store(e.n.newTable(p.idx, p.addr, e.n.grantBatch()))
	e.tell(note{op: noteLeft, slot: uint16(p.idx), inc: p.inc})
	e.ev.push(Event{Kind: Left, Slot: p.idx})
	e.maybeDial(p.idx) // its successor, if we heard of one
	if e.contact == p {
		e.contact = nil // it left before it told us who is present
		e.seekContact()
	}
	e.check()
}

// heard takes a member note from peer p.
func (e *elastic) heard(p *peer, n note) error {
	if int(n.slot) >= len(e.slots) {
		return fmt.Errorf("member note about slot %d of %d", n.slot, len(e.slots))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	i := int(n.slot)
	s := &e.slots[i]
	switch {
	case n.op == noteSynced:
		if o := &e.slots[p.idx]; o.p == p {
			o.synced = true
		}
		if e.contact == p {
			e.contact, e.joining = nil, false
		}
	case i == e.n.self:
	case n.op == noteJoined:
		if e.gone[n.inc] || s.up && s.p.inc == n.inc {
			return nil // (a handshake in progress may fail: heard until up)
		}
		s.heard = n.inc
		e.maybeDial(i)
	case n.op == noteLeft:
		e.gone[n.inc] = true
		if s.heard == n.inc {
			s.heard = 0
		}
	}
	e.check()
	return nil
}

// seekContact starts a dialer that looks for a contact among Config.Join,
// if we join and none is connected (under e.mu).
func (e *elastic) seekContact() {
	if !e.joining || e.contact != nil || e.seeking || e.halted {
		return
	}
	e.seeking = true
	e.n.wg.Add(1)
	go func() {
		defer e.n.wg.Done()
		e.cn.dial(-1, e.n.cfg.Join, func() bool {
			e.mu.Lock()
			defer e.mu.Unlock()
			return e.joining && e.contact == nil && !e.halted
		})
		e.mu.Lock()
		defer e.mu.Unlock()
		e.seeking = false
		e.seekContact()
	}()
}

// maybeDial starts a dialer for slot i if we heard of a process there
// that is not connected, and it is ours to dial (under e.mu).
func (e *elastic) maybeDial(i int) {
	s := &e.slots[i]
	if i <= e.n.self || s.dialer || s.p != nil || !e.missing(i) || e.halted {
		return
	}
	s.dialer = true
	e.n.wg.Add(1)
	go e.dialSlot(i)
}

// dialSlot dials the process heard of in slot i until it is connected,
// no longer heard of, or the network stops. After Dial returned, it
// gives up after DialTimeout and forgets the slot: the process there,
// which waits for us, fails its own Dial in that time and leaves.
func (e *elastic) dialSlot(i int) {
	defer e.n.wg.Done()
	since := time.Now()
	e.cn.dial(i, []string{e.n.cfg.Addrs[i]}, func() bool { return e.keepDialing(i, since) })
	e.mu.Lock()
	defer e.mu.Unlock()
	e.slots[i].dialer = false
	e.maybeDial(i)
}

func (e *elastic) keepDialing(i int, since time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := &e.slots[i]
	switch {
	case e.halted || s.p != nil || s.heard == 0:
		return false
	case !e.dialing && time.Since(since) > e.n.cfg.DialTimeout:
		e.n.log.Error(fmt.Sprintf("transport: process %d: gave up on process %d at %s, heard to be present but not reached within %v",
			e.n.self, i, e.n.cfg.Addrs[i], e.n.cfg.DialTimeout))
		s.heard = 0
		return false
	}
	return true
}

// check ends Dial once its view is complete: no contact pending, every
// process heard of connected, every peer's first notes arrived (under
// e.mu).
func (e *elastic) check() {
	if !e.dialing || e.done || e.joining {
		return
	}
	for i := range e.slots {
		if s := &e.slots[i]; e.missing(i) || s.up && !s.synced {
			return
		}
	}
	e.done, e.ready = true, true
	close(e.settled)
	for _, p := range e.owed {
		p.enqueue(outFrame{kind: KindMember, note: note{op: noteSynced}}) // fails only once p ended
	}
	e.owed = nil
}

// failDial fails Dial with err, unless its outcome is decided (under
// e.mu).
func (e *elastic) failDial(err error) {
	if e.dialing && !e.done {
		e.done, e.err = true, err
		close(e.failed)
	}
}

// halt ends listening, dialing and handshakes, once the network stopped.
func (e *elastic) halt() {
	e.mu.Lock()
	if e.halted {
		e.mu.Unlock()
		return
	}
	e.halted = true
	e.mu.Unlock()
	e.cancel()
	for _, ln := range e.lns {
		ln.Close()
	}
	e.cn.mu.Lock()
	e.cn.over = true
	for c := range e.cn.live {
		c.Close()
	}
	e.cn.mu.Unlock()
}

// live returns the peers whose reader or writer may run.
func (e *elastic) live() []*peer {
	e.mu.Lock()
	defer e.mu.Unlock()
	ps := make([]*peer, 0, len(e.peers))
	for p := range e.peers {
		ps = append(ps, p)
	}
	return ps
}

// members returns the slots connected now, and this process's.
func (e *elastic) members() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := []int{e.n.self}
	for i := range e.slots {
		if e.slots[i].up {
			m = append(m, i)
		}
	}
	slices.Sort(m)
	return m
}
