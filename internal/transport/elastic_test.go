package transport

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// sameEvents reports whether got holds the events of want, in any order.
func sameEvents(got, want []Event) bool {
	key := func(e Event) string { return e.String() }
	g, w := make([]string, len(got)), make([]string, len(want))
	for i := range got {
		g[i] = key(got[i])
	}
	for i := range want {
		w[i] = key(want[i])
	}
	slices.Sort(g)
	slices.Sort(w)
	return slices.Equal(g, w)
}

// TestElasticJoin starts 2 of 3 slots, has a third process join through
// one of them, and exchanges data between all three on several channels
// both ways; each reports the others Joined.
func TestElasticJoin(t *testing.T) {
	for _, mk := range slotMeshes {
		t.Run(mk.name, func(t *testing.T) {
			m := mk.make(t, 3)
			m.start(0, 1)
			nets := netsOf(m, 3)
			waitMembers(t, nets, []int{0, 1})
			exchangeSlots(t, nets, []int{0, 1}, []uint32{1}, 20)
			m.join([]int{2}, []int{0})
			nets = netsOf(m, 3)
			waitMembers(t, nets, []int{0, 1, 2})
			for i, want := range [][]Event{
				{{Joined, 1}, {Joined, 2}}, {{Joined, 0}, {Joined, 2}}, {{Joined, 0}, {Joined, 1}},
			} {
				if got := nextEvents(t, nets[i], 2); !sameEvents(got, want) {
					t.Errorf("slot %d: Events() = %v; want %v", i, got, want)
				}
			}
			exchangeSlots(t, nets, []int{0, 1, 2}, []uint32{0, 7, 1 << 31}, 100)
			for i, nw := range nets {
				if nw.Processes() != 3 || nw.Self() != i {
					t.Errorf("slot %d: Processes(), Self() = %d, %d; want 3, %d", i, nw.Processes(), nw.Self(), i)
				}
			}
		})
	}
}

// TestElasticLeaveAndRejoin has the process in slot 1 send frames to the
// others and leave while they exchange data between them: they do not
// fail, receive every frame it sent once and in order and then io.EOF,
// their Senders to it fail with ErrPeerClosed, and they report it Left.
// Then a new process takes slot 1: the old Receivers stay ended, new
// ones carry its frames, with sequence numbers and credits afresh, and a
// Sender made while the slot was free sends to it.
func TestElasticLeaveAndRejoin(t *testing.T) {
	for _, mk := range slotMeshes {
		t.Run(mk.name, func(t *testing.T) {
			m := mk.make(t, 3)
			m.start(0, 1, 2)
			nets := netsOf(m, 3)
			waitMembers(t, nets, []int{0, 1, 2})
			nextEvents(t, nets[0], 2)
			nextEvents(t, nets[2], 2)
			const ch, frames = 5, 300
			exchangeSlots(t, nets, []int{0, 1, 2}, []uint32{ch}, 50)
			s01 := nets[0].Sender(ch, 1)
			old := nets[0].Receiver(ch, 1)
			leave(t, nets, ch, 50, frames)
			for _, i := range []int{0, 2} {
				if got := nextEvents(t, nets[i], 1); got[0] != (Event{Left, 1}) {
					t.Errorf("slot %d: Events() = %v; want left 1", i, got)
				}
			}
			if err := s01.Send(s01.Buffer()); !errors.Is(err, ErrPeerClosed) {
				t.Errorf("Send() to a process that left = %v; want %v", err, ErrPeerClosed)
			}
			waitMembers(t, nets, []int{0, 2})
			waiting := nets[0].Sender(9, 1)
			if waiting == s01 {
				t.Error("Sender() after the process left = its old Sender; want one for the next process")
			}
			sent := make(chan error, 1)
			go func() { sent <- waiting.Send(payload(waiting.Buffer(), 0, 1, 9, 0)) }()

			m.join([]int{1}, []int{2})
			nets = netsOf(m, 3)
			waitMembers(t, nets, []int{0, 1, 2})
			for _, i := range []int{0, 2} {
				if got := nextEvents(t, nets[i], 1); got[0] != (Event{Joined, 1}) {
					t.Errorf("slot %d: Events() = %v; want joined 1", i, got)
				}
			}
			if nets[0].Receiver(ch, 1) == old {
				t.Error("Receiver() after the slot was taken again = the old one; want a new one")
			}
			if err := recvFrames(nets[1].Receiver(9, 0), 0, 1, 9, 0, 1); err != nil {
				t.Errorf("the Sender made while the slot was free: %v", err)
			}
			if err := <-sent; err != nil {
				t.Errorf("Send() while the slot was free = %v", err)
			}
			exchangeSlots(t, nets, []int{0, 1, 2}, []uint32{ch, 6}, 100)
			if err := recvEOF(old); err != nil {
				t.Errorf("the old Receiver after the rejoin: %v", err)
			}
			for _, i := range []int{0, 2} {
				if err := nets[i].Err(); err != nil {
					t.Errorf("slot %d: Err() = %v; want nil", i, err)
				}
			}
		})
	}
}

// leave has the process in slot 1 send frames to slots 0 and 2 on ch
// (after the first ones from) and then Close, while 0 and 2 exchange
// frames between them on other channels. Slots 0 and 2 must get each
// frame once and in order, then io.EOF, and not fail.
func leave(t *testing.T, nets []Elastic, ch uint32, first, frames int) {
	t.Helper()
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	for _, j := range []int{0, 2} {
		r := nets[j].Receiver(ch, 1)
		wg.Go(func() {
			if err := recvFrames(r, 1, j, ch, first, frames); err != nil {
				errc <- err
			} else if err := recvEOF(r); err != nil {
				errc <- fmt.Errorf("1→%d after the last frame: %v", j, err)
			}
		})
	}
	wg.Go(func() {
		s := []Sender{nets[1].Sender(ch, 0), nets[1].Sender(ch, 2)}
		for k := first; k < frames; k++ {
			for x, j := range []int{0, 2} {
				if err := s[x].Send(payload(s[x].Buffer(), 1, j, ch, k)); err != nil {
					errc <- fmt.Errorf("1→%d: Send(%d) = %v", j, k, err)
					return
				}
			}
		}
		if err := nets[1].Close(); err != nil {
			errc <- fmt.Errorf("Close() of the leaving process = %v", err)
		}
	})
	exchangeSlots(t, nets, []int{0, 2}, []uint32{ch + 1, ch + 2}, 200)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	for _, i := range []int{0, 2} {
		select {
		case <-nets[i].Done():
			t.Fatalf("slot %d: Done() after slot 1 left: %v", i, nets[i].Err())
		default:
		}
	}
}
