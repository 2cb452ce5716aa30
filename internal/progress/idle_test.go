package progress

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Idle senders are left out of the minimum; when every sender that has
// not ended is idle, the watermark is the highest of theirs and the
// aligned marker is idle; it never goes back.
func TestAlignerIdle(t *testing.T) {
	type step struct {
		s int
		m Marker
	}
	for _, tc := range []struct {
		name  string
		n     int
		steps []step
		want  Marker // the last aligned marker
	}{
		{"one idle of two", 2, []step{{0, Marker{Watermark: 50}}, {1, Marker{Watermark: 10, Idle: true}}}, Marker{Watermark: 50}},
		{"idle without a watermark", 2, []step{{0, Marker{Watermark: 50}}, {1, Marker{Watermark: NoWatermark, Idle: true}}}, Marker{Watermark: 50}},
		{"all idle: the highest", 2, []step{{0, Marker{Watermark: 50, Idle: true}}, {1, Marker{Watermark: 10, Idle: true}}}, Marker{Watermark: 50, Idle: true}},
		{"idle and final", 2, []step{{0, Marker{Watermark: 10, Idle: true}}, {1, Marker{Watermark: 70, Final: true}}}, Marker{Watermark: 10, Idle: true}},
		{"final and idle", 2, []step{{0, Marker{Watermark: 70, Final: true}}, {1, Marker{Watermark: 10, Idle: true}}}, Marker{Watermark: 10, Idle: true}},
		{"final idle is final", 1, []step{{0, Marker{Watermark: 10, Idle: true, Final: true}}}, Marker{Watermark: MaxWatermark, Final: true}},
		{"back from idle, behind: held", 2, []step{
			{0, Marker{Epoch: 0, Watermark: 50}}, {1, Marker{Epoch: 0, Watermark: 10, Idle: true}},
			{0, Marker{Epoch: 1, Watermark: 60}}, {1, Marker{Epoch: 1, Watermark: 20}},
		}, Marker{Epoch: 1, Watermark: 50}},
		{"back from idle, ahead", 2, []step{
			{0, Marker{Epoch: 0, Watermark: 50}}, {1, Marker{Epoch: 0, Watermark: 10, Idle: true}},
			{0, Marker{Epoch: 1, Watermark: 60}}, {1, Marker{Epoch: 1, Watermark: 55}},
		}, Marker{Epoch: 1, Watermark: 55}},
		{"all idle, then one back behind", 2, []step{
			{0, Marker{Epoch: 0, Watermark: 50, Idle: true}}, {1, Marker{Epoch: 0, Watermark: 10, Idle: true}},
			{0, Marker{Epoch: 1, Watermark: 50, Idle: true}}, {1, Marker{Epoch: 1, Watermark: 30}},
		}, Marker{Epoch: 1, Watermark: 50}},
	} {
		a := NewAligner(tc.n)
		var got Marker
		for _, st := range tc.steps {
			if out, ok := a.Mark(st.s, st.m); ok {
				got = out
			}
		}
		if got != tc.want {
			t.Errorf("%s: aligned %v; want %v", tc.name, got, tc.want)
		}
	}
}

// TestAlignerIdleRandom checks the idle rule against a plain model: senders
// that end every epoch, some of them idle at some epochs, delivered in a
// random interleaving.
func TestAlignerIdleRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 1000 {
		n := 1 + r.IntN(4)
		epochs := 1 + r.IntN(8)
		last := make([]int, n) // the epoch of the sender's final marker
		ms := make([][]Marker, n)
		for s := range n {
			last[s] = r.IntN(epochs)
			wm := int64(r.IntN(20)) - 5
			for e := 0; e <= last[s]; e++ {
				wm += int64(r.IntN(10))
				ms[s] = append(ms[s], Marker{Epoch: Epoch(e), Watermark: wm, Idle: r.IntN(3) == 0, Final: e == last[s]})
			}
		}
		a := NewAligner(n)
		queues := make([][]Marker, n)
		for s := range n {
			queues[s] = append([]Marker(nil), ms[s]...)
		}
		var got []Marker
		deliverRandom(r, a, queues, func(_ int, _, out Marker, ok bool) {
			if ok {
				got = append(got, out)
			}
		})
		maxLast := slices.Max(last)
		if len(got) != maxLast+1 {
			t.Fatalf("trial %d: %d epochs completed; want %d", trial, len(got), maxLast+1)
		}
		prev := NoWatermark
		for e, m := range got {
			want, idle := idleModel(ms, last, e)
			if e == maxLast {
				want, idle = MaxWatermark, false
			}
			want = max(want, prev)
			if m.Epoch != Epoch(e) || m.Watermark != want || m.Idle != idle || m.Final != (e == maxLast) {
				t.Fatalf("trial %d: epoch %d aligned %v; want wm %d idle %v", trial, e, m, want, idle)
			}
			prev = m.Watermark
		}
	}
}

// idleModel is the watermark of epoch e before the clamp: the minimum over
// the live senders that are not idle, or the highest over the idle ones
// if all live senders are.
func idleModel(ms [][]Marker, last []int, e int) (Watermark, bool) {
	low, high, active := MaxWatermark, NoWatermark, false
	for s := range ms {
		if e >= last[s] {
			continue // ended: +inf
		}
		if m := ms[s][e]; m.Idle {
			high = max(high, m.Watermark)
		} else {
			low, active = min(low, m.Watermark), true
		}
	}
	if !active {
		return high, true
	}
	return low, false
}
