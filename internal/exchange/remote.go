package exchange

import (
	"fmt"
	"sync/atomic"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/transport"
)

// releaser is every batch kind an exchange sends.
type releaser interface{ Release() }

// RemoteOutlet sends an exchange's messages to an inbox in another
// process: it encodes each batch into a transport buffer and gives the
// batch back to its pool.
type RemoteOutlet struct {
	W     dataflow.Wire
	S     transport.Sender
	Name  string
	Bytes *atomic.Int64 // the job's bytes sent, frame headers included
}

func (o *RemoteOutlet) Send(b any) error {
	buf, err := o.W.Encode(o.S.Buffer(), b)
	b.(releaser).Release()
	if err != nil {
		return fmt.Errorf("%s: %w", o.Name, err)
	}
	o.Bytes.Add(int64(len(buf) + transport.HeaderSize))
	return o.S.Send(buf)
}

func (o *RemoteOutlet) Mark(m progress.Marker) error {
	buf := appendMarker(o.S.Buffer(), m)
	o.Bytes.Add(int64(len(buf) + transport.HeaderSize))
	return o.S.Send(buf)
}

// Pump feeds one sender's slot of a local inbox with what that sender,
// in another process, sends: it decodes each message and hands it on, and
// ends after the sender's final marker.
func Pump(w dataflow.Wire, r transport.Receiver, out runtime.Outlet, from string) func(done <-chan struct{}) error {
	return func(<-chan struct{}) error {
		for {
			buf, err := r.Recv()
			if err != nil {
				return err
			}
			if len(buf) == 0 {
				r.Release()
				return fmt.Errorf("%s: %w: empty message", from, errWire)
			}
			if buf[0] == tagMarker {
				m, err := decodeMarker(&Reader{B: buf[1:]})
				r.Release()
				if err != nil {
					return fmt.Errorf("%s: %w", from, err)
				}
				if err := out.Mark(m); err != nil {
					return err
				}
				if m.Final {
					return nil
				}
				continue
			}
			msg, err := w.Decode(buf)
			r.Release()
			if err != nil {
				return fmt.Errorf("%s: %w", from, err)
			}
			if err := out.Send(msg); err != nil {
				return err
			}
		}
	}
}

// ChannelID names the transport channel of edge e from sender instance s
// to receiver instance r.
func ChannelID(e, s, r int) (uint32, error) {
	if e >= 1<<12-1 || s >= 1<<10 || r >= 1<<10 {
		return 0, fmt.Errorf("weir: a distributed job supports up to 4095 edges and 1024 instances per operator")
	}
	return uint32(e)<<20 | uint32(s)<<10 | uint32(r), nil
}
