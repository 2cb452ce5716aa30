package runtime

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/progress"
)

// heldSource emits 1, 2, ..., n, ten an epoch, and waits on hold before
// the records of epoch at.
type heldSource struct {
	n, i, at int
	hold     chan struct{}
	out      Outlet
}

func (s *heldSource) Poll(int) (int, error) {
	if s.i == s.n {
		return 0, ErrEndOfInput
	}
	if s.i == s.at*10 && s.hold != nil {
		<-s.hold
		s.hold = nil
	}
	s.i++
	return 1, s.out.Send(s.i)
}

func (s *heldSource) Mark(m progress.Marker) error { return s.out.Mark(m) }
func (s *heldSource) Close() error                 { return nil }

// A receiver's sender in another process is absent at first: the
// receiver aligns epochs without it. Once it joins at epoch 6, the
// receiver waits for its marker that ends 6, holds what it sends until
// then, and counts it in epoch 6.
func TestJoinWhileRunning(t *testing.T) {
	rt := New(Config{Records: 10})
	in := rt.NewInbox("sum", 0, 4)
	sum := &sumTask{}
	src := &heldSource{n: 100, at: 4, hold: make(chan struct{}), out: in.Sender(0)}
	remote := rt.Retirement("src", 1)
	remote.Absent()
	far := in.SenderFrom(0, remote)
	rt.AddSource("src", 0, src, false)
	rt.AddTask("sum", 0, in, sum, true)
	ran := make(chan error, 1)
	go func() { ran <- rt.Run(context.Background()) }()
	aligned := func() int {
		sum.mu.Lock()
		defer sum.mu.Unlock()
		return len(sum.epochs)
	}
	for aligned() < 4 {
		time.Sleep(time.Millisecond)
	}
	remote.Join(6)
	go func() {
		far.Send(1000)
		far.Mark(progress.Marker{Epoch: 6})
		far.Mark(progress.Marker{Epoch: 10, Final: true})
	}()
	close(src.hold)
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	upTo := func(n int) int { return n * (n + 1) / 2 }
	want := []int{upTo(10), upTo(20), upTo(30), upTo(40), upTo(50), upTo(60), upTo(70) + 1000, upTo(80) + 1000, upTo(90) + 1000, upTo(100) + 1000}
	if len(sum.epochs) < len(want) || !sum.final {
		t.Fatalf("aligned %v (final %v); want %v then the final marker", sum.epochs, sum.final, want)
	}
	for e, w := range want {
		if sum.epochs[e] != w {
			t.Errorf("after epoch %d the sum is %d, want %d (all: %v)", e, sum.epochs[e], w, sum.epochs)
		}
	}
}

// A receiver's sender in another process retires from epoch 3 (its
// process leaves), and a new process takes the slot again from epoch 6:
// the receiver aligns epochs 3 to 5 without it and waits for it again
// from 6, whether the join is known before or after its final marker
// arrives.
func TestRejoinWhileRunning(t *testing.T) {
	for _, early := range []bool{false, true} {
		rt := New(Config{Records: 10})
		in := rt.NewInbox("sum", 0, 8)
		sum := &sumTask{}
		src := &heldSource{n: 100, at: 4, hold: make(chan struct{}), out: in.Sender(0)}
		remote := rt.Retirement("src", 1)
		remote.Set(3)
		far := in.SenderFrom(0, remote)
		rt.AddSource("src", 0, src, false)
		rt.AddTask("sum", 0, in, sum, true)
		ran := make(chan error, 1)
		go func() { ran <- rt.Run(context.Background()) }()
		aligned := func() int {
			sum.mu.Lock()
			defer sum.mu.Unlock()
			return len(sum.epochs)
		}
		far.Send(1000)
		far.Mark(progress.Marker{Epoch: 0})
		for aligned() < 1 {
			time.Sleep(time.Millisecond)
		}
		if early {
			remote.Join(6) // before the receiver took the final marker
		}
		far.Mark(progress.Marker{Epoch: 2, Final: true})
		for aligned() < 4 {
			time.Sleep(time.Millisecond)
		}
		if !early {
			remote.Join(6)
		}
		if got := remote.From(); got != never {
			t.Fatalf("a rejoined instance retires from %d; want never", got)
		}
		go func() {
			far.Send(2000)
			far.Mark(progress.Marker{Epoch: 6})
			far.Mark(progress.Marker{Epoch: 10, Final: true})
		}()
		close(src.hold)
		if err := <-ran; err != nil {
			t.Fatal(err)
		}
		upTo := func(n int) int { return n * (n + 1) / 2 }
		want := []int{upTo(10) + 1000, upTo(20) + 1000, upTo(30) + 1000, upTo(40) + 1000, upTo(50) + 1000, upTo(60) + 1000,
			upTo(70) + 3000, upTo(80) + 3000, upTo(90) + 3000, upTo(100) + 3000}
		if len(sum.epochs) < len(want) || !sum.final {
			t.Fatalf("early %v: aligned %v (final %v); want %v then the final marker", early, sum.epochs, sum.final, want)
		}
		for e, w := range want {
			if sum.epochs[e] != w {
				t.Errorf("early %v: after epoch %d the sum is %d, want %d (all: %v)", early, e, sum.epochs[e], w, sum.epochs)
			}
		}
	}
}

// marks is a Remote that records the markers it carries and how often it
// was asked to find its receiver anew.
type marks struct {
	epochs  []progress.Epoch
	rejoins []int // len(epochs) at each Rejoin
	sent    []int // len(rejoins) at each Send
}

func (m *marks) Send(any) error                { m.sent = append(m.sent, len(m.rejoins)); return nil }
func (m *marks) Mark(mk progress.Marker) error { m.epochs = append(m.epochs, mk.Epoch); return nil }
func (m *marks) Rejoin() error                 { m.rejoins = append(m.rejoins, len(m.epochs)); return nil }

// An outlet towards a remote instance that retires from epoch 3 and takes
// part again from 6 passes the markers of epochs 0 to 2 and from 6 on,
// refuses records in between, and finds the receiver anew once, before
// the first record of epoch 6.
func TestOutletTowardsRejoined(t *testing.T) {
	x := newRetirement(nil)
	x.Set(3)
	rec := &marks{}
	o := RemoteOutlet(rec).Until(x)
	for e := range 8 {
		if e == 4 {
			x.Join(6)
		}
		if e >= 3 && e < 6 && !o.Retired() {
			t.Errorf("the outlet takes records in epoch %d, where its receiver takes no part", e)
		}
		if e == 6 {
			if err := o.Send(1); err != nil {
				t.Fatal(err)
			}
		}
		if err := o.Mark(progress.Marker{Epoch: progress.Epoch(e)}); err != nil {
			t.Fatal(err)
		}
	}
	want := []progress.Epoch{0, 1, 2, 6, 7}
	if fmt.Sprint(rec.epochs) != fmt.Sprint(want) {
		t.Errorf("markers passed: %v; want %v", rec.epochs, want)
	}
	if fmt.Sprint(rec.rejoins) != "[3]" {
		t.Errorf("found anew before markers %v; want once, before the marker of epoch 6 ([3])", rec.rejoins)
	}
	if fmt.Sprint(rec.sent) != "[1]" {
		t.Errorf("records sent after %v renewals; want one, after the renewal", rec.sent)
	}
}
