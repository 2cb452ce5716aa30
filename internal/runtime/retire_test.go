package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/weirstream/weir/internal/progress"
)

// routedSource emits 1, 2, ..., n, sending the records of epochs from
// away on to outs[0] only (the routing of a job whose other receivers
// retire at away), the others to every outlet in turn.
type routedSource struct {
	n, i, away int
	epoch      int
	outs       []Outlet
	mu         sync.Mutex
	sent       int // the sum of what was sent
}

func (s *routedSource) Poll(int) (int, error) {
	if s.i == s.n {
		return 0, ErrEndOfInput
	}
	s.i++
	o := s.outs[s.i%len(s.outs)]
	if s.epoch >= s.away {
		o = s.outs[0]
	}
	s.mu.Lock()
	s.sent += s.i
	s.mu.Unlock()
	return 1, o.Send(s.i)
}

func (s *routedSource) Mark(m progress.Marker) error {
	s.epoch = int(m.Epoch) + 1
	for _, o := range s.outs {
		if err := o.Mark(m); err != nil {
			return err
		}
	}
	return nil
}

func (s *routedSource) Close() error { return nil }

func (s *routedSource) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}

// TestRetireWhileRunning retires one of two receivers from epoch 3 and
// one of two sources from epoch 5: the retired instances end after the
// epoch before, with a final marker, the others run to the end, and
// every record sent arrives once.
func TestRetireWhileRunning(t *testing.T) {
	rt := New(Config{Records: 10})
	sums := []*sumTask{{}, {}}
	ins := []*Inbox{rt.NewInbox("sum", 0, 2), rt.NewInbox("sum", 1, 2)}
	var srcs []*routedSource
	for i := range 2 {
		s := &routedSource{n: 200, away: 3}
		for k, in := range ins {
			s.outs = append(s.outs, in.Sender(0).Until(rt.Retirement("sum", k)))
		}
		srcs = append(srcs, s)
		rt.AddSource("src", i, s, false)
	}
	for k, in := range ins {
		rt.AddTask("sum", k, in, sums[k], true)
	}
	rt.Retirement("sum", 1).Set(3)
	rt.Retirement("src", 1).Set(5)
	if err := rt.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := len(sums[1].epochs); got != 3 || !sums[1].final {
		t.Errorf("the retired receiver ended %d epochs (final %v); want 3, final", got, sums[1].final)
	}
	if !sums[0].final {
		t.Errorf("the receiver that stays did not end with the job")
	}
	// Source 1 read 10 records an epoch for epochs 0..4, then ended.
	if srcs[1].i != 50 || srcs[0].i != 200 {
		t.Errorf("the sources read %d and %d records; want 200 and 50", srcs[0].i, srcs[1].i)
	}
	want := srcs[0].total() + srcs[1].total()
	if got := sums[0].sum + sums[1].sum; got != want {
		t.Errorf("the receivers summed %d; the sources sent %d", got, want)
	}
}

// TestRecordForRetiredFails: a record the routing still sends to a
// retired instance fails the job instead of getting lost.
func TestRecordForRetiredFails(t *testing.T) {
	rt := New(Config{Records: 10})
	ins := []*Inbox{rt.NewInbox("sum", 0, 2), rt.NewInbox("sum", 1, 2)}
	s := &routedSource{n: 100, away: 1 << 30} // never routes away
	for k, in := range ins {
		s.outs = append(s.outs, in.Sender(0).Until(rt.Retirement("sum", k)))
	}
	rt.AddSource("src", 0, s, false)
	for k, in := range ins {
		rt.AddTask("sum", k, in, &sumTask{}, true)
	}
	rt.Retirement("sum", 1).Set(2)
	err := rt.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "retired from epoch 2") {
		t.Fatalf("Run = %v; want an error about a record for a retired instance", err)
	}
}

// A marker from another process is noted before the outlet reads whether
// its receiver has joined: RemoteMarked is the highest such epoch, final
// markers left out; the marker still goes, or is dropped, as Mark would.
func TestMarkRemote(t *testing.T) {
	rt := New(Config{Records: 10})
	in := rt.NewInbox("sum", 0, 4)
	x := rt.Retirement("sum", 0)
	x.Absent()
	o := in.Sender(0).Until(x)
	for _, m := range []progress.Marker{{Epoch: 7}, {Epoch: 5}, {Epoch: 30, Final: true}} {
		if err := o.MarkRemote(m); err != nil {
			t.Fatal(err)
		}
	}
	if got := rt.RemoteMarked(); got != 7 {
		t.Errorf("RemoteMarked() = %d; want 7", got)
	}
	if n := len(in.chans[0]); n != 0 {
		t.Errorf("%d markers reached an instance that has not joined; want them dropped", n)
	}
	x.Join(8)
	if err := o.MarkRemote(progress.Marker{Epoch: 8}); err != nil {
		t.Fatal(err)
	}
	if n := len(in.chans[0]); n != 1 || rt.RemoteMarked() != 8 {
		t.Errorf("after the join at 8: %d markers in, RemoteMarked %d; want 1 and 8", n, rt.RemoteMarked())
	}
}
