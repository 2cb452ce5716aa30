package transport

import (
	"context"
	"fmt"
	"sync"
)

// localAddr is the address of in-process peers in errors.
const localAddr = "local"

// NewLocal returns n in-process "processes" joined by hand: the same
// Network interface as Dial's, with the same credits, ordering and close
// semantics, but no TCP, no framing and no headers: payload slices are
// handed over as they are. Tests and single-process runs use it.
func NewLocal(n int) []Network {
	if n < 1 || n > MaxProcesses {
		panic("transport: NewLocal: process count out of range")
	}
	ms := make([]*mux, n)
	for i := range ms {
		ms[i] = newMux(i, n, DefaultCredits)
	}
	nets := make([]Network, n)
	formed := &localBarrier{left: n, done: make(chan struct{}), settings: make([][]Setting, n)}
	for i, m := range ms {
		for j, p := range ms {
			m.setTable(j, localAddr, localLink{from: m, to: p}, 1)
		}
		nets[i] = &localNetwork{mux: m, all: ms, formed: formed}
	}
	return nets
}

// localNetwork is one process of NewLocal.
type localNetwork struct {
	*mux
	all    []*mux
	once   sync.Once
	formed *localBarrier
	joined sync.Once
}

// localBarrier is closed once every process of NewLocal has joined.
type localBarrier struct {
	mu   sync.Mutex
	left int
	done chan struct{}
	// settings are each process's, as it joined (nil: none to compare);
	// read once done is closed.
	settings [][]Setting
}

// Join waits until every process of NewLocal has joined, as Dial waits
// until every peer is up: a process does what it must before it joins
// (discard a failed run's checkpoints, say) before any other process
// sends it anything or writes a checkpoint. It compares no settings.
func (l *localNetwork) Join(ctx context.Context) error { return l.JoinWith(ctx, nil) }

// JoinWith is Join for a process with settings (Config.Settings): once
// every process has joined, they are compared with those of each other
// process that gave some, as Dial's handshake compares them, and the
// first peer whose settings differ is returned as a *MismatchError
// (every process of such a mesh gets one, from its own point of view).
// Processes that run other jobs over an in-process network would
// otherwise exchange records over channels that do not match, and hang.
// Settings must have names, each once; their size is not bounded, since
// they are not sent. Only the first call of a process joins; one whose
// settings are refused does not.
func (l *localNetwork) JoinWith(ctx context.Context, settings []Setting) error {
	if err := checkNames(settings); err != nil {
		return fmt.Errorf("transport: %w", err)
	}
	l.joined.Do(func() {
		b := l.formed
		b.mu.Lock()
		b.settings[l.self] = settings
		if b.left--; b.left == 0 {
			close(b.done)
		}
		b.mu.Unlock()
	})
	select {
	case <-l.formed.done:
		return l.formed.compare(l.self)
	case <-ctx.Done():
		return fmt.Errorf("transport: waiting for the other local processes to join: %w", context.Cause(ctx))
	}
}

// compare returns the first peer of process self whose settings differ
// from its own, both given, as a *MismatchError.
func (b *localBarrier) compare(self int) error {
	return firstMismatch(self, b.settings[self], b.settings)
}

// firstMismatch returns the first process of all (settings by process,
// nil for none given) whose settings differ from mine, those of process
// self, as a *MismatchError from self's side; nil if mine is nil.
func firstMismatch(self int, mine []Setting, all [][]Setting) error {
	if mine == nil {
		return nil
	}
	for peer, theirs := range all {
		if peer == self || theirs == nil {
			continue
		}
		// Walk the lower-indexed process's list, as the handshake does,
		// so that both sides name the same setting.
		first := self < peer
		a, c := theirs, mine
		if first {
			a, c = mine, theirs
		}
		if d := firstDifference(a, c); d.Difference {
			here, there := d.sides(first)
			return &MismatchError{Peer: peer, Addr: localAddr, Setting: d.Name, Here: here, There: there}
		}
	}
	return nil
}

func (l *localNetwork) Close() error {
	l.once.Do(func() {
		l.stop(ErrClosed)
		for j, m := range l.all {
			if j != l.self {
				m.table(l.self).peerClosed()
			}
		}
	})
	if err := l.Err(); err != ErrClosed {
		return err
	}
	return nil
}

func (l *localNetwork) Abort(reason error) {
	l.once.Do(func() {
		l.stop(reason)
		for j, m := range l.all {
			if j != l.self {
				m.stop(&PeerError{Peer: l.self, Addr: localAddr, Err: fmt.Errorf("failed: %w", reason)})
			}
		}
	})
}

// localLink hands frames from process from to process to (maybe itself).
type localLink struct {
	from, to *mux
}

func (l localLink) transmit(ch uint32, seq uint64, p []byte) error {
	if err := l.to.table(l.from.self).receiver(ch).deliver(seq, p); err != nil {
		// The sender counted credits and sequence numbers itself.
		panic("transport: local " + err.Error())
	}
	return nil
}

func (l localLink) grant(ch uint32, n int) {
	if err := l.to.table(l.from.self).sender(ch).addCredits(n); err != nil {
		panic("transport: local " + err.Error())
	}
}
