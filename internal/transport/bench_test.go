package transport

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// TestSteadyStateAllocs pins that sending and receiving a payload
// allocates nothing once buffers and queues have grown: not Send, not
// Recv, not the connection's reader and writer.
func TestSteadyStateAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("timing-sensitive")
	}
	for _, m := range meshes {
		for _, size := range []int{100, 64 << 10} {
			t.Run(fmt.Sprintf("%s/%d", m.name, size), func(t *testing.T) {
				nets := m.make(t, 2)
				steadyAllocs(t, nets[0].Sender(1, 1), nets[1].Receiver(1, 0), size)
			})
		}
	}
}

// TestElasticSteadyStateAllocs is TestSteadyStateAllocs over elastic
// meshes, between a process and one that joined it.
func TestElasticSteadyStateAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("timing-sensitive")
	}
	for _, mk := range slotMeshes {
		t.Run(mk.name, func(t *testing.T) {
			m := mk.make(t, 3)
			m.start(0)
			m.join([]int{2}, []int{0})
			steadyAllocs(t, m.net(2).Sender(1, 0), m.net(0).Receiver(1, 2), 100)
		})
	}
}

// steadyAllocs sends payloads of size from s to r, and fails the test if
// they allocate once warm.
func steadyAllocs(t *testing.T, s Sender, r Receiver, size int) {
	data := make([]byte, size)
	round := func() {
		if err := s.Send(append(s.Buffer(), data...)); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Recv(); err != nil {
			t.Fatal(err)
		}
		r.Release()
	}
	for range 100 {
		round()
	}
	// testing.AllocsPerRun rounds down; count them all. A few are allowed
	// for the runtime's own doings (GC workers, goroutine stacks); one per
	// payload is not.
	const rounds = 1000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range rounds {
		round()
	}
	runtime.ReadMemStats(&after)
	if got := after.Mallocs - before.Mallocs; got > rounds/20 {
		t.Errorf("%d allocations for %d payloads of %d bytes; want none", got, rounds, size)
	}
}

// BenchmarkMesh streams payloads over one channel from one process to
// another, over TCP loopback and in process.
func BenchmarkMesh(b *testing.B) {
	for _, m := range meshes {
		for _, size := range []int{1 << 10, 64 << 10} {
			b.Run(fmt.Sprintf("%s/%dKiB", m.name, size>>10), func(b *testing.B) {
				nets := m.make(b, 2)
				s, r := nets[0].Sender(1, 1), nets[1].Receiver(1, 0)
				data := make([]byte, size)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				go func() {
					for range b.N {
						if err := s.Send(append(s.Buffer(), data...)); err != nil {
							b.Error(err)
							return
						}
					}
				}()
				for range b.N {
					if _, err := r.Recv(); err != nil {
						b.Fatal(err)
					}
					r.Release()
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "frames/s")
			})
		}
	}
}
