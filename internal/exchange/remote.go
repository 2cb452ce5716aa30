package exchange

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/trace"
	"github.com/weirstream/weir/internal/transport"
)

// releaser is every batch kind an exchange sends.
type releaser interface{ Release() }

// creditWaiter is a transport sender that tells how long it waited for
// credit (nanoseconds, cumulative).
type creditWaiter interface{ CreditWait() int64 }

// RemoteOutlet sends an exchange's messages to an inbox in another
// process: it encodes each batch into a transport buffer and gives the
// batch back to its pool. M, if set, is the sending worker's meter: it
// counts the bytes sent and the waits for credit, and traces the
// encoding and the sends on channel Ch, numbering its messages from 0 as
// the receiving Pump does.
type RemoteOutlet struct {
	W     dataflow.Wire
	S     transport.Sender
	Name  string
	Bytes *atomic.Int64 // the job's bytes sent, frame headers included
	M     *runtime.Meter
	Ch    uint32
	// Renew, if set, returns the channel to the receiver's process anew
	// (runtime.Rejoiner): a new process took the receiver's slot.
	Renew func() (transport.Sender, error)
	seq   uint64
}

// Rejoin asks Renew for the channel to the receiver's new process.
func (o *RemoteOutlet) Rejoin() error {
	if o.Renew == nil {
		return nil
	}
	s, err := o.Renew()
	if err != nil {
		return err
	}
	o.S = s
	return nil
}

// TraceChannel is the trace identity of transport channel ch: the same
// at the sender and at the receiver.
func TraceChannel(ch uint32) uint64 { return 1<<63 | uint64(ch) }

func (o *RemoteOutlet) Send(b any) error {
	tracing := o.M != nil && o.M.Tracing()
	var t0 int64
	if tracing {
		t0 = runtime.Now()
	}
	buf, err := o.W.Encode(o.S.Buffer(), b)
	b.(releaser).Release()
	if err != nil {
		return fmt.Errorf("%s: %w", o.Name, err)
	}
	if tracing {
		o.M.Event(trace.Serialization, t0, runtime.Now(), 0, 0)
	}
	return o.send(buf)
}

func (o *RemoteOutlet) Mark(m progress.Marker) error {
	return o.send(appendMarker(o.S.Buffer(), m))
}

// send hands buf to the transport, measuring it.
func (o *RemoteOutlet) send(buf []byte) error {
	n := int64(len(buf) + transport.HeaderSize)
	o.Bytes.Add(n)
	if o.M == nil {
		return o.S.Send(buf)
	}
	o.M.M.AddBytesOut(int(n))
	cw, _ := o.S.(creditWaiter)
	var w0 int64
	if cw != nil {
		w0 = cw.CreditWait()
	}
	tracing := o.M.Tracing()
	var t0 int64
	if tracing {
		t0 = runtime.Now()
	}
	err := o.S.Send(buf)
	var waited int64
	if cw != nil {
		if waited = cw.CreditWait() - w0; waited > 0 {
			o.M.Blocked(waited)
		}
	}
	if tracing {
		t1 := runtime.Now()
		if waited > 0 {
			o.M.Event(trace.WaitCredit, t0, min(t0+waited, t1), 0, 0)
			t0 = min(t0+waited, t1)
		}
		o.M.Event(trace.Send, t0, t1, TraceChannel(o.Ch), o.seq)
	}
	o.seq++
	return err
}

// Pump feeds one sender's slot of a local inbox with what that sender,
// in another process, sends on channel ch: it decodes each message and
// hands it on, and ends after the sender's final marker or the
// marker after which the receiver retires. m is the pump's
// own meter; the bytes received count as in's (the receiving instance).
func Pump(w dataflow.Wire, r transport.Receiver, out runtime.Outlet, from string, ch uint32, m *runtime.Meter, in *metrics.Instance) func(done <-chan struct{}) error {
	p := &pump{w: w, r: r, out: out.From(m), from: from, ch: TraceChannel(ch), m: m, in: in}
	return func(<-chan struct{}) error {
		m.Open()
		defer m.Close()
		for {
			final, err := p.next()
			if errors.Is(err, io.EOF) && p.seq == 0 {
				return fmt.Errorf("%s: %w", from, ErrSilentClose)
			}
			if err != nil || final {
				return err
			}
		}
	}
}

// ErrSilentClose is what a pump returns when the sending process closed
// its end of the mesh in order before sending anything on the channel.
var ErrSilentClose = fmt.Errorf("the sending process ended before it sent anything: %w", io.EOF)

type pump struct {
	w    dataflow.Wire
	r    transport.Receiver
	out  runtime.Outlet
	from string
	ch   uint64
	seq  uint64
	m    *runtime.Meter
	in   *metrics.Instance
}

// next takes one message and hands it on; it reports whether it was the
// final marker.
func (p *pump) next() (bool, error) {
	tracing := p.m.Tracing()
	var t0 int64
	if tracing {
		t0 = runtime.Now()
	}
	buf, err := p.r.Recv()
	if err != nil {
		return false, err
	}
	p.in.AddBytesIn(len(buf) + transport.HeaderSize)
	var t1 int64
	if tracing {
		t1 = runtime.Now()
		p.m.Event(trace.WaitInput, t0, t1, 0, 0)
		p.m.Event(trace.Recv, t1, t1, p.ch, p.seq)
	}
	p.seq++
	if len(buf) == 0 {
		p.r.Release()
		return false, fmt.Errorf("%s: %w: empty message", p.from, errWire)
	}
	if buf[0] == tagMarker {
		m, err := decodeMarker(&Reader{B: buf[1:]})
		p.r.Release()
		if err != nil {
			return false, fmt.Errorf("%s: %w", p.from, err)
		}
		if err := p.out.MarkRemote(m); err != nil {
			return false, err
		}
		p.m.Flush()
		// The receiver may retire after m: then nothing more comes.
		return m.Final || p.out.Ends(m), nil
	}
	msg, err := p.w.Decode(buf)
	p.r.Release()
	if err != nil {
		return false, fmt.Errorf("%s: %w", p.from, err)
	}
	if tracing {
		p.m.Event(trace.Deserialization, t1, runtime.Now(), 0, 0)
	}
	return false, p.out.Send(msg)
}

// ChannelID names the transport channel of edge e from sender instance s
// to receiver instance r.
func ChannelID(e, s, r int) (uint32, error) {
	if e >= 1<<12-1 || s >= 1<<10 || r >= 1<<10 {
		return 0, fmt.Errorf("weir: a distributed job supports up to 4095 edges and 1024 instances per operator")
	}
	return uint32(e)<<20 | uint32(s)<<10 | uint32(r), nil
}
