package transport

import (
	"sync/atomic"
	"time"
)

// PeerCounts is the data traffic with one peer: payload bytes (frame
// headers included) and frames sent and received, and the time senders
// spent waiting for the peer's credit.
type PeerCounts struct {
	Peer       int
	BytesOut   int64
	FramesOut  int64
	BytesIn    int64
	FramesIn   int64
	CreditWait time.Duration
}

// peerCounts is a table's traffic, counted with atomics by the senders
// and the receiving side.
type peerCounts struct {
	bytesOut, framesOut, bytesIn, framesIn, wait atomic.Int64
}

// sent counts a data frame of n payload bytes whose sender waited for
// credit for waited.
func (c *peerCounts) sent(n int, waited time.Duration) {
	c.bytesOut.Add(int64(n + HeaderSize))
	c.framesOut.Add(1)
	if waited > 0 {
		c.wait.Add(int64(waited))
	}
}

// received counts a data frame of n payload bytes.
func (c *peerCounts) received(n int) {
	c.bytesIn.Add(int64(n + HeaderSize))
	c.framesIn.Add(1)
}

// Peers returns the traffic with every other process, in process order.
// All of this package's networks implement it. In an elastic mesh it is
// the traffic with the process in each slot since it joined; slots
// without a process (none joined, or it left) are left out.
func (m *mux) Peers() []PeerCounts {
	out := make([]PeerCounts, 0, m.procs)
	for i := range m.tables {
		t := m.table(i)
		if i == m.self || t == nil || !t.linked() {
			continue
		}
		c := &t.counts
		out = append(out, PeerCounts{Peer: i, BytesOut: c.bytesOut.Load(), FramesOut: c.framesOut.Load(),
			BytesIn: c.bytesIn.Load(), FramesIn: c.framesIn.Load(), CreditWait: time.Duration(c.wait.Load())})
	}
	return out
}
