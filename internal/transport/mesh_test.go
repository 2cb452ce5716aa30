package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"
)

// payload builds frame k of channel ch from process i to j: a header
// naming all four, then a deterministic filler of varying length (up to
// 20000 bytes, beyond the writer's copy threshold).
func payload(b []byte, i, j int, ch uint32, k int) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(i))
	b = binary.BigEndian.AppendUint32(b, uint32(j))
	b = binary.BigEndian.AppendUint32(b, ch)
	b = binary.BigEndian.AppendUint32(b, uint32(k))
	n := (k * 7919) % 20000
	if k%3 != 0 {
		n %= 300
	}
	for x := range n {
		b = append(b, byte(x+k))
	}
	return b
}

// TestMesh sends many payloads on several channels between every pair of
// three processes (each to itself too) and checks order and content.
func TestMesh(t *testing.T) {
	for _, m := range meshes {
		t.Run(m.name, func(t *testing.T) {
			nets := m.make(t, 3)
			exchange(t, nets, []uint32{0, 7, 1 << 31}, 150)
			closeAll(t, nets)
		})
	}
}

// exchange sends frames payloads on each channel between every pair of
// processes and checks what arrives.
func exchange(t *testing.T, nets []Network, chans []uint32, frames int) {
	t.Helper()
	all := make([]int, len(nets))
	for i := range all {
		all[i] = i
	}
	exchangeAmong(t, nets, all, chans, frames)
}

// exchangeAmong is exchange between the processes procs of nets (by
// index) only.
func exchangeAmong(t *testing.T, nets []Network, procs []int, chans []uint32, frames int) {
	t.Helper()
	var wg sync.WaitGroup
	errc := make(chan error, 2*len(procs)*len(procs)*len(chans))
	for _, i := range procs {
		for _, j := range procs {
			for _, ch := range chans {
				wg.Go(func() {
					s := nets[i].Sender(ch, j)
					for k := range frames {
						if err := s.Send(payload(s.Buffer(), i, j, ch, k)); err != nil {
							errc <- fmt.Errorf("%d→%d ch %d: Send(%d) = %v", i, j, ch, k, err)
							return
						}
					}
				})
				wg.Go(func() {
					if err := recvFrames(nets[j].Receiver(ch, i), i, j, ch, 0, frames); err != nil {
						errc <- err
					}
				})
			}
		}
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}

// recvFrames receives frames from..to-1 of channel ch from i at j, and
// checks each.
func recvFrames(r Receiver, i, j int, ch uint32, from, to int) error {
	want := make([]byte, 0, 32<<10)
	for k := from; k < to; k++ {
		p, err := r.Recv()
		if err != nil {
			return fmt.Errorf("%d→%d ch %d: Recv() #%d = %v", i, j, ch, k, err)
		}
		want = payload(want[:0], i, j, ch, k)
		if string(p) != string(want) {
			return fmt.Errorf("%d→%d ch %d: Recv() #%d = %d bytes %x…; want %d bytes %x…",
				i, j, ch, k, len(p), p[:min(16, len(p))], len(want), want[:16])
		}
		r.Release()
	}
	return nil
}

// closeAll closes every network at once and checks it closed in order.
func closeAll(t *testing.T, nets []Network) {
	t.Helper()
	errs := make([]error, len(nets))
	var wg sync.WaitGroup
	for i, nw := range nets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = nw.Close()
		}()
	}
	wg.Wait()
	for i, nw := range nets {
		if errs[i] != nil {
			t.Errorf("process %d: Close() = %v; want nil", i, errs[i])
		}
		if err := nw.Err(); err != ErrClosed {
			t.Errorf("process %d: Err() after Close = %v; want %v", i, err, ErrClosed)
		}
	}
}

// TestFlowControl stops reading channel A: its sender blocks after
// Credits frames, while channel B on the same connection still flows.
func TestFlowControl(t *testing.T) {
	for _, m := range meshes {
		t.Run(m.name, func(t *testing.T) {
			nets := m.make(t, 2)
			const a, b = 1, 2
			sa := nets[0].Sender(a, 1)
			for k := range DefaultCredits {
				if err := sa.Send(payload(sa.Buffer(), 0, 1, a, k)); err != nil {
					t.Fatalf("Send(#%d) on A = %v", k, err)
				}
			}
			blocked := make(chan error, 1)
			go func() { blocked <- sa.Send(payload(sa.Buffer(), 0, 1, a, DefaultCredits)) }()

			sb, rb := nets[0].Sender(b, 1), nets[1].Receiver(b, 0)
			go func() {
				for k := range 10 * DefaultCredits {
					if err := sb.Send(payload(sb.Buffer(), 0, 1, b, k)); err != nil {
						t.Errorf("Send(#%d) on B = %v", k, err)
						return
					}
				}
			}()
			for k := range 10 * DefaultCredits {
				p, err := rb.Recv()
				if err != nil {
					t.Fatalf("Recv() #%d on B = %v", k, err)
				}
				if got := binary.BigEndian.Uint32(p[12:]); got != uint32(k) {
					t.Fatalf("Recv() #%d on B = frame %d", k, got)
				}
				rb.Release()
			}
			select {
			case err := <-blocked:
				t.Fatalf("Send(#%d) on A = %v without credit; want it blocked", DefaultCredits, err)
			case <-time.After(100 * time.Millisecond):
			}

			ra := nets[1].Receiver(a, 0)
			for k := range DefaultCredits + 1 {
				p, err := ra.Recv()
				if err != nil {
					t.Fatalf("Recv() #%d on A = %v", k, err)
				}
				if got := binary.BigEndian.Uint32(p[12:]); got != uint32(k) {
					t.Fatalf("Recv() #%d on A = frame %d", k, got)
				}
				ra.Release()
				if k == DefaultCredits-1 {
					select {
					case err := <-blocked:
						if err != nil {
							t.Fatalf("blocked Send on A = %v", err)
						}
					case <-time.After(5 * time.Second):
						t.Fatal("Send on A still blocked after its receiver released every frame")
					}
				}
			}
		})
	}
}

// TestOrderlyClose closes one process: its peer is not failed, its sends
// fail with ErrPeerClosed and its receives end with io.EOF after what was
// queued.
func TestOrderlyClose(t *testing.T) {
	for _, m := range meshes {
		t.Run(m.name, func(t *testing.T) {
			nets := m.make(t, 2)
			s := nets[1].Sender(3, 0)
			for k := range 3 {
				if err := s.Send(payload(s.Buffer(), 1, 0, 3, k)); err != nil {
					t.Fatalf("Send(#%d) = %v", k, err)
				}
			}
			blocked := nets[0].Receiver(4, 1)
			recvErr := make(chan error, 1)
			go func() { _, err := blocked.Recv(); recvErr <- err }()

			if err := nets[1].Close(); err != nil {
				t.Fatalf("Close() = %v; want nil", err)
			}
			if err := <-recvErr; err != io.EOF {
				t.Errorf("Recv() on an idle channel of a closed peer = %v; want io.EOF", err)
			}
			r := nets[0].Receiver(3, 1)
			for k := range 3 {
				if _, err := r.Recv(); err != nil {
					t.Fatalf("Recv() #%d = %v; want the frames sent before Close", k, err)
				}
			}
			if _, err := r.Recv(); err != io.EOF {
				t.Errorf("Recv() after the last frame = %v; want io.EOF", err)
			}
			s0 := nets[0].Sender(3, 1)
			if err := s0.Send(s0.Buffer()); !errors.Is(err, ErrPeerClosed) {
				t.Errorf("Send() to a closed peer = %v; want %v", err, ErrPeerClosed)
			}
			select {
			case <-nets[0].Done():
				t.Fatalf("Done() fired after the peer's orderly Close: %v", nets[0].Err())
			case <-time.After(200 * time.Millisecond):
			}
			if err := nets[0].Err(); err != nil {
				t.Errorf("Err() = %v; want nil", err)
			}
			if err := nets[0].Close(); err != nil {
				t.Errorf("Close() of the survivor = %v; want nil", err)
			}
		})
	}
}
