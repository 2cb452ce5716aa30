package runtime

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/progress"
)

// ownedSource emits 1, 2, ..., n, ten an epoch, each record to one of
// the outlets that owns(epoch) lists, in turn, and waits on hold before
// the records of epoch at.
type ownedSource struct {
	n, i, at, epoch int
	owns            func(epoch int) []int
	hold            chan struct{}
	outs            []Outlet
	mu              sync.Mutex
	sent            int
}

func (s *ownedSource) Poll(int) (int, error) {
	if s.i == s.n {
		return 0, ErrEndOfInput
	}
	if s.epoch == s.at && s.hold != nil {
		<-s.hold
		s.hold = nil
	}
	s.i++
	own := s.owns(s.epoch)
	s.mu.Lock()
	s.sent += s.i
	s.mu.Unlock()
	return 1, s.outs[own[s.i%len(own)]].Send(s.i)
}

func (s *ownedSource) Mark(m progress.Marker) error {
	s.epoch = int(m.Epoch) + 1
	for _, o := range s.outs {
		if err := o.Mark(m); err != nil {
			return err
		}
	}
	return nil
}

func (s *ownedSource) Close() error { return nil }

// passTask passes what it reads on to out, and counts the epochs of
// its life and its records in them.
type passTask struct {
	first  uint64
	out    Outlet
	mu     sync.Mutex
	epochs []progress.Epoch
	sum    int
	final  bool
}

func (t *passTask) Batch(_ int, b any) error {
	t.mu.Lock()
	t.sum += b.(int)
	t.mu.Unlock()
	return t.out.Send(b)
}

func (t *passTask) Mark(m progress.Marker) error {
	t.mu.Lock()
	t.epochs = append(t.epochs, m.Epoch)
	t.final = m.Final
	t.mu.Unlock()
	return t.out.Mark(m)
}

// TestRestartableInstances: three instances between two sources and a
// sink. Instance 1 retires from epoch 3 and takes part again from 8;
// instance 2 is absent until 4. Source a ends in epoch 5, while
// instance 1 takes no part: its final marker is held and reaches
// instance 1 when it joins again. Each life gets a task of its own,
// made for its first epoch; the sink takes instance 1 back at 8; every
// record arrives once.
func TestRestartableInstances(t *testing.T) {
	rt := New(Config{Records: 10})
	sink := rt.NewInbox("sink", 0, 4)
	total := &sumTask{}
	owns := func(e int) []int {
		switch {
		case e < 3:
			return []int{0, 1}
		case e < 5:
			return []int{0}
		case e < 9:
			return []int{0, 2}
		}
		return []int{0, 1, 2}
	}
	srcs := []*ownedSource{{n: 50, at: 3, hold: make(chan struct{}), owns: owns}, {n: 300, at: 3, hold: make(chan struct{}), owns: owns}}
	var mu sync.Mutex
	lives := map[int][]*passTask{}
	for i := range 3 {
		in := rt.NewInbox("pass", i, 4)
		for _, s := range srcs {
			s.outs = append(s.outs, in.Sender(0))
		}
		x := rt.Retirement("pass", i)
		var out Outlet
		if i == 0 {
			out = sink.Sender(0)
			rt.AddTask("pass", i, in, &passTask{out: out}, false)
			continue
		}
		out = sink.SenderFrom(0, x)
		rt.AddRestartable("pass", i, in, func(first uint64) (InputTask, error) {
			p := &passTask{first: first, out: out.From(rt.Meter("pass", i))}
			mu.Lock()
			lives[i] = append(lives[i], p)
			mu.Unlock()
			return p, nil
		}, false)
	}
	for i, s := range srcs {
		rt.AddSource("src", i, s, false)
	}
	rt.AddTask("sink", 0, sink, total, true)
	rt.Retirement("pass", 1).Set(3)
	rt.Retirement("pass", 2).Absent()
	ran := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() { ran <- rt.Run(ctx) }()
	// Instance 1 ends its first life after epoch 2, while the sources
	// wait before epoch 3.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		var life *passTask
		if len(lives[1]) == 1 {
			life = lives[1][0]
		}
		mu.Unlock()
		done := false
		if life != nil {
			life.mu.Lock()
			done = life.final
			life.mu.Unlock()
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("instance 1 did not end its first life")
		}
		time.Sleep(time.Millisecond)
	}
	rt.Retirement("pass", 2).Join(4)
	rt.Retirement("pass", 1).Join(8)
	for _, s := range srcs {
		close(s.hold)
	}
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	want := srcs[0].sent + srcs[1].sent
	if total.sum != want || !total.final {
		t.Errorf("the sink summed %d (final %v); the sources sent %d", total.sum, total.final, want)
	}
	if len(lives[1]) != 2 || len(lives[2]) != 1 {
		t.Fatalf("instance 1 lived %d times, instance 2 %d; want 2 and 1", len(lives[1]), len(lives[2]))
	}
	first, again := lives[1][0], lives[1][1]
	if first.first != 0 || len(first.epochs) != 3 || !first.final {
		t.Errorf("instance 1's first life began at %d and ended epochs %v (final %v); want 0, 0..2, final", first.first, first.epochs, first.final)
	}
	if again.first != 8 || len(again.epochs) == 0 || again.epochs[0] != 8 || !again.final {
		t.Errorf("instance 1's second life began at %d and ended epochs %v (final %v); want 8, from 8, final", again.first, again.epochs, again.final)
	}
	if l := lives[2][0]; l.first != 4 || l.epochs[0] != 4 || !l.final {
		t.Errorf("instance 2 began at %d and ended epochs %v; want 4, from 4", l.first, l.epochs)
	}
	// Records of epochs 0..2 and from 9 went to instance 1.
	in1 := 0
	for _, s := range srcs {
		for i := 1; i <= s.n; i++ {
			if e := (i - 1) / 10; owns(e)[i%len(owns(e))] == 1 {
				in1 += i
			}
		}
	}
	if got := first.sum + again.sum; got != in1 {
		t.Errorf("instance 1 passed on %d; the sources sent it %d", got, in1)
	}
}

// absentOnly is a runtime whose one instance is restartable and absent.
func absentOnly() *Runtime {
	rt := New(Config{Records: 10})
	in := rt.NewInbox("pass", 0, 4)
	rt.AddRestartable("pass", 0, in, func(uint64) (InputTask, error) { return nil, errors.New("it never joins") }, false)
	rt.Retirement("pass", 0).Absent()
	return rt
}

// A hold keeps a runtime whose instances all wait from ending until it is
// released (once, however often called); one released before the run
// holds nothing.
func TestHold(t *testing.T) {
	rt := absentOnly()
	release := rt.Hold()
	ran := make(chan error, 1)
	go func() { ran <- rt.Run(context.Background()) }()
	select {
	case err := <-ran:
		t.Fatalf("Run = %v while held", err)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	release()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return once released")
	}
	early := absentOnly()
	early.Hold()()
	runWithin(t, early, "a hold released before the run held it")
}
