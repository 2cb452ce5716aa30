package transport

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// LocalSlots is an elastic mesh of processes that live in one Go process
// (tests, in-process runs): the same Elastic networks as Dial's with
// Config.Elastic, over slots that processes take (Join) and free (Close)
// while the others run. Payloads are handed over as they are, as by
// NewLocal.
type LocalSlots struct {
	mu       sync.Mutex
	procs    []*localElastic // the process in each slot, nil if free
	settings [][]Setting     // theirs, as they joined
	failed   error           // a process aborted: the mesh failed
}

// NewLocalSlots returns an in-process elastic mesh of n slots, all free.
func NewLocalSlots(n int) *LocalSlots {
	if n < 1 || n > MaxProcesses {
		panic("transport: NewLocalSlots: slot count out of range")
	}
	return &LocalSlots{procs: make([]*localElastic, n), settings: make([][]Setting, n)}
}

// Join starts a process in slot, connected at once to every process
// present, each of which reports it Joined (as it reports each of them
// Joined). Its settings (Config.Settings; nil: none to compare) are
// compared with those of each process present, as Dial's handshake
// compares them: the first that differs refuses it with a *MismatchError;
// a slot whose process runs refuses it with a *RefusedError. A refused
// process does not join, and the others run on.
func (l *LocalSlots) Join(slot int, settings []Setting) (Elastic, error) {
	if slot < 0 || slot >= len(l.procs) {
		return nil, fmt.Errorf("transport: slot %d out of range [0, %d)", slot, len(l.procs))
	}
	if err := checkNames(settings); err != nil {
		return nil, fmt.Errorf("transport: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.failed != nil:
		return nil, fmt.Errorf("transport: the local mesh failed: %w", l.failed)
	case l.procs[slot] != nil:
		return nil, &RefusedError{Peer: slot, Addr: localAddr, Reason: fmt.Sprintf("slot %d is taken: its process runs", slot), ByPeer: true}
	}
	if err := firstMismatch(slot, settings, l.settings); err != nil {
		return nil, err
	}
	m := newMux(slot, len(l.procs), DefaultCredits)
	nw := &localElastic{mux: m, slots: l, ev: newEvents()}
	go nw.ev.run(m.done)
	m.setTable(slot, localAddr, localLink{from: m, to: m}, 1)
	for j, o := range l.procs {
		switch {
		case j == slot:
		case o == nil:
			m.tables[j].Store(m.newTable(j, localAddr, 1))
		default:
			mine, theirs := m.newTable(j, localAddr, 1), o.table(slot)
			mine.attach(tableLink{to: theirs})
			theirs.attach(tableLink{to: mine})
			m.tables[j].Store(mine)
			nw.ev.push(Event{Kind: Joined, Slot: j})
			o.ev.push(Event{Kind: Joined, Slot: slot})
		}
	}
	l.procs[slot], l.settings[slot] = nw, settings
	return nw, nil
}

// localElastic is one process of LocalSlots.
type localElastic struct {
	*mux
	slots *LocalSlots
	ev    *events
	once  sync.Once
}

func (nw *localElastic) Events() <-chan Event { return nw.ev.out }

func (nw *localElastic) Members() []int {
	l := nw.slots
	l.mu.Lock()
	defer l.mu.Unlock()
	m := []int{nw.self}
	for j, o := range l.procs {
		if o != nil && j != nw.self {
			m = append(m, j)
		}
	}
	slices.Sort(m)
	return m
}

// Close leaves in order: each other process's channels from this one end
// after what was sent, its channels to it fail, and the slot is free.
func (nw *localElastic) Close() error {
	nw.once.Do(func() {
		l := nw.slots
		l.mu.Lock()
		defer l.mu.Unlock()
		nw.stop(ErrClosed)
		l.procs[nw.self], l.settings[nw.self] = nil, nil
		for _, o := range l.procs {
			if o != nil {
				o.table(nw.self).peerClosed()
				o.tables[nw.self].Store(o.newTable(nw.self, localAddr, 1))
				o.ev.push(Event{Kind: Left, Slot: nw.self})
			}
		}
	})
	if err := nw.Err(); !errors.Is(err, ErrClosed) {
		return err
	}
	return nil
}

// Abort fails every process of the mesh, as a crash of one process of a
// TCP mesh does.
func (nw *localElastic) Abort(reason error) {
	nw.once.Do(func() {
		l := nw.slots
		l.mu.Lock()
		defer l.mu.Unlock()
		nw.stop(reason)
		err := &PeerError{Peer: nw.self, Addr: localAddr, Err: fmt.Errorf("failed: %w", reason)}
		l.failed = err
		for j, o := range l.procs {
			if o != nil && j != nw.self {
				o.stop(err)
			}
		}
	})
}

// tableLink hands frames to the peer's table for us, directly.
type tableLink struct{ to *table }

func (l tableLink) transmit(ch uint32, seq uint64, p []byte) error {
	if err := l.to.receiver(ch).deliver(seq, p); err != nil {
		// The sender counted credits and sequence numbers itself.
		panic("transport: local " + err.Error())
	}
	return nil
}

func (l tableLink) grant(ch uint32, n int) {
	if err := l.to.sender(ch).addCredits(n); err != nil {
		panic("transport: local " + err.Error())
	}
}
