package runtime

import (
	"context"
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
