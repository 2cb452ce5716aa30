package runtime

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/trace"
)

// Inbox is the input of one task instance: one bounded channel per sender,
// so that the task can stop reading from a sender that has already ended
// the current epoch while it waits for the others. That sender then blocks
// once its channel is full: alignment holds nothing back in memory, and a
// fast input is slowed down to the pace of the slowest (backpressure), as
// Flink's aligned barriers do.
type Inbox struct {
	rt    *Runtime
	name  string
	depth int
	chans []chan Message
	ports []int         // sender index -> input port
	ready chan struct{} // a sender sent something; capacity 1
	ids   []uint64      // sender index -> the channel's trace identity
	seqs  []uint64      // sender index -> messages taken from it so far
	gone  *Retirement   // the instance's retirement
	// from holds, per sender, the sending instance's retirement if it
	// runs in another process, which may join the job later, or is a
	// restartable one.
	from []*Retirement
	// restart is set for a restartable instance's inbox: final markers
	// towards it are held for its later joins.
	restart bool
}

// queued returns the number of messages waiting in the inbox.
func (in *Inbox) queued() int {
	n := 0
	for _, c := range in.chans {
		n += len(c)
	}
	return n
}

// recv records, when tracing, that the task took a message from sender
// s at t (an edge from the Send event with the same channel and
// sequence number), and counts it.
func (in *Inbox) recv(m *Meter, s int, t int64, tracing bool) {
	if tracing {
		m.Event(trace.Recv, t, t, in.ids[s], in.seqs[s])
	}
	in.seqs[s]++
}

// Sender registers a new sender on input port port and returns its end of
// the inbox. All senders must be registered before Run.
func (in *Inbox) Sender(port int) Outlet {
	in.ports = append(in.ports, port)
	in.chans = append(in.chans, make(chan Message, in.depth))
	s := len(in.ports) - 1
	in.rt.channels++
	id := uint64(in.rt.cfg.Process+1)<<32 | in.rt.channels
	in.ids = append(in.ids, id)
	in.seqs = append(in.seqs, 0)
	in.from = append(in.from, nil)
	return Outlet{in: in, ch: in.chans[s], link: &link{id: id, gone: in.gone, marked: -1}}
}

// SenderFrom registers, as Sender does, a sender that is instance x of
// another process, or a restartable instance of this one: while x is
// absent (Retirement.Absent) or retired the task does not wait for it,
// and it takes it back at the epoch x joins.
func (in *Inbox) SenderFrom(port int, x *Retirement) Outlet {
	o := in.Sender(port)
	in.from[len(in.from)-1] = x
	return o
}

// joins applies to al what the senders' retirements say. At start (seen
// 0) the senders absent in the first epoch are left out, and those whose
// join epoch is known are taken back from it; later, each sender whose
// join epoch has changed is: an absent one that joins, or one that
// retired and whose slot a new process took again (after its final
// marker, if that is still to come). at holds, per sender, the join
// epoch applied (never for one left out). It returns what to pass as
// seen next: the count of joins set in the runtime, plus one.
func (in *Inbox) joins(al *progress.Aligner, at []uint64, first uint64, seen uint64) (uint64, error) {
	now := in.rt.joins.Load() + 1
	if now == seen {
		return seen, nil
	}
	for s, x := range in.from {
		if x == nil {
			continue
		}
		j := x.Joins()
		if seen == 0 {
			at[s] = j
			if !x.present(first) {
				al.Absent(s)
				at[s] = never
				if x.From() <= first && j <= first {
					at[s] = j // it retired before the first epoch
				}
			}
		}
		if j == never || j == at[s] {
			continue
		}
		// A sender whose final marker is still to come takes part again
		// after it.
		if ok := al.Final(s) && al.Join(s, progress.Epoch(j)) || !al.Final(s) && al.JoinAfter(s, progress.Epoch(j)); !ok {
			return now, fmt.Errorf("runtime: task %s: sender %d joins at epoch %d, which has begun here already (epoch %d)", in.name, s, j, al.Current())
		}
		at[s] = j
	}
	return now, nil
}

// Outlet is one sender's end of an inbox, or of a receiver in another
// process. It is used by one goroutine.
type Outlet struct {
	in     *Inbox
	ch     chan Message
	remote Remote
	link   *link
}

// link is what an outlet's copies share: the sending worker's meter, and
// the channel's trace identity and count of messages sent.
type link struct {
	m    *Meter
	id   uint64
	seq  uint64
	keys *metrics.KeyCounter
	// gone, if set, is the receiver's retirement; marked is the epoch of
	// the last marker sent to it (-1 before the first).
	gone   *Retirement
	marked int64
	// joinSent is the receiver's join epoch when the outlet last sent it
	// a marker (a remote receiver's join epoch changes when a new process
	// takes its slot again).
	joinSent uint64
}

// WithKeys returns the outlet with c as the count per key group that
// its sender's keyed exchange keeps (c is shared by the sender's outlets
// of one edge).
func (o Outlet) WithKeys(c *metrics.KeyCounter) Outlet {
	l := &link{}
	if o.link != nil {
		*l = *o.link
	}
	l.keys = c
	o.link = l
	return o
}

// Keys returns the count per key group set by WithKeys, or nil.
func (o Outlet) Keys() *metrics.KeyCounter {
	if o.link == nil {
		return nil
	}
	return o.link.keys
}

// From returns the outlet as worker m's: the records it sends count as
// m's output, its waits for space as m's backpressure.
func (o Outlet) From(m *Meter) Outlet {
	l := &link{m: m, marked: -1}
	if o.link != nil {
		l.id, l.gone, l.marked, l.joinSent = o.link.id, o.link.gone, o.link.marked, o.link.joinSent
	}
	o.link = l
	return o
}

// Since returns the outlet as one whose sender starts at epoch first (a
// later run of a restartable instance): it goes on as if its last marker
// had ended epoch first-1, so a receiver that retired by then, or joins
// later, gets no marker from it before it takes part.
func (o Outlet) Since(first uint64) Outlet {
	if o.link == nil || first == 0 {
		return o
	}
	l := *o.link
	l.marked = int64(first) - 1
	o.link = &l
	return o
}

// Remote carries what an outlet sends to an inbox in another process: the
// remote outlet of internal/exchange encodes it and the transport carries it. Send owns the
// batch from then on.
type Remote interface {
	Send(batch any) error
	Mark(m progress.Marker) error
}

// Rejoiner is a Remote that can find its receiver's process anew: the
// process it ran in left, and another took the slot again.
type Rejoiner interface {
	Rejoin() error
}

// rejoin has a remote outlet find its receiver anew before it sends it
// the first of epoch e, if e is the first since a new join epoch.
func (o Outlet) rejoin(e uint64) error {
	if rj, ok := o.remote.(Rejoiner); ok && o.link.renews(e) {
		return rj.Rejoin()
	}
	return nil
}

// RemoteOutlet returns an outlet that sends through r.
func RemoteOutlet(r Remote) Outlet { return Outlet{remote: r} }

// Send hands a batch to the receiver, blocking while this sender's channel
// is full. It fails only when the runtime is stopping.
func (o Outlet) Send(batch any) error {
	if err := o.link.checkSend(); err != nil {
		return err
	}
	if o.link != nil && o.link.m != nil {
		o.link.m.M.AddOut(Records(batch))
	}
	if o.remote != nil {
		if o.link != nil {
			if err := o.rejoin(uint64(o.link.marked + 1)); err != nil {
				return err
			}
		}
		return o.remote.Send(batch)
	}
	return o.send(Message{Batch: batch})
}

// Handed counts n records as sent by the outlet's sender that reach the
// receivers another way: through memory the receivers share (the
// deposits of a micro-batch exchange).
func (o Outlet) Handed(n int) {
	if o.link != nil && o.link.m != nil {
		o.link.m.M.AddOut(n)
	}
}

// Blocked counts d as time the outlet's sender spent waiting for its
// receivers to take what it handed them another way (backpressure), as a
// full channel's wait counts.
func (o Outlet) Blocked(d time.Duration) {
	if o.link != nil && o.link.m != nil {
		o.link.m.Blocked(int64(d))
	}
}

// Mark ends an epoch on this channel. A final marker towards a receiver
// in another process, which may join later, or towards a restartable
// one, is held for its joins (finals.go).
func (o Outlet) Mark(m progress.Marker) error {
	holds := m.Final && (o.remote != nil || o.in != nil && o.in.restart) && o.link != nil && o.link.gone != nil && o.link.gone.rt != nil
	var sent uint64
	if holds {
		sent = o.link.gone.Joins()
	}
	dropped, err := o.mark(m)
	if holds && err == nil {
		if dropped {
			sent = never
		}
		o.link.gone.rt.hold(o, m, sent)
	}
	return err
}

// mark sends m, or drops it if the receiver takes no part.
func (o Outlet) mark(m progress.Marker) (dropped bool, err error) {
	if o.link.dropMark(m) {
		return true, nil
	}
	if o.remote != nil {
		if err := o.rejoin(uint64(m.Epoch)); err != nil {
			return false, err
		}
		return false, o.remote.Mark(m)
	}
	return false, o.send(Message{Marker: m})
}

func (o Outlet) send(m Message) error {
	// The send is timed before the message is in the channel, where the
	// receiver may take it at once: a send never ends after its receive.
	l := o.link
	tracing := l != nil && l.m != nil && l.m.Tracing()
	var t int64
	if tracing {
		t = Now()
	}
	select {
	case o.ch <- m:
	default:
		t1, err := o.wait(m)
		if err != nil {
			return err
		}
		t = max(t, t1)
	}
	if l != nil {
		if tracing {
			l.m.Event(trace.Send, t, t, l.id, l.seq)
		}
		l.seq++
	}
	select {
	case o.in.ready <- struct{}{}:
	default:
	}
	return nil
}

// wait sends m on a full channel: the sender waits for space
// (backpressure). It returns when the wait ended, when the sender is
// metered.
func (o Outlet) wait(m Message) (int64, error) {
	var mt *Meter
	if o.link != nil {
		mt = o.link.m
	}
	var t0 int64
	if mt != nil {
		t0 = Now()
	}
	select {
	case o.ch <- m:
	case <-o.in.rt.done:
		return 0, errStopped
	}
	var t1 int64
	if mt != nil {
		t1 = Now()
		mt.Blocked(t1 - t0)
		if mt.Tracing() {
			mt.Event(trace.WaitCredit, t0, t1, 0, 0)
		}
	}
	return t1, nil
}
