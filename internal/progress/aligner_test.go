package progress

import (
	"math/rand/v2"
	"testing"
)

func TestAlignerTwoSenders(t *testing.T) {
	a := NewAligner(2)
	if a.Ahead(0) || a.Ahead(1) {
		t.Fatal("no sender may be ahead at the start")
	}
	if _, ok := a.Mark(0, Marker{Epoch: 0, Watermark: 10, Cut: 5}); ok {
		t.Fatal("epoch 0 completed with one of two markers")
	}
	if !a.Ahead(0) {
		t.Fatal("sender 0 ended epoch 0; Ahead(0) = false; want true")
	}
	out, ok := a.Mark(1, Marker{Epoch: 0, Watermark: 7, Cut: 3})
	if !ok {
		t.Fatal("epoch 0 not completed with both markers")
	}
	want := Marker{Epoch: 0, Watermark: 7, Cut: 3}
	if out != want {
		t.Errorf("aligned marker = %v; want %v", out, want)
	}
	if a.Ahead(0) || a.Current() != 1 {
		t.Errorf("after epoch 0: Ahead(0)=%v Current=%d; want false, 1", a.Ahead(0), a.Current())
	}
}

func TestAlignerFinalSenders(t *testing.T) {
	a := NewAligner(2)
	// Sender 0 ends after epoch 0; sender 1 goes on to epoch 2.
	a.Mark(0, Marker{Epoch: 0, Watermark: 5, Final: true})
	out, ok := a.Mark(1, Marker{Epoch: 0, Watermark: 3})
	if !ok || out.Final || out.Watermark != 3 {
		t.Fatalf("epoch 0: got %v %v; want not final, wm 3", out, ok)
	}
	if !a.Ahead(0) {
		t.Error("a final sender must count as ahead")
	}
	out, ok = a.Mark(1, Marker{Epoch: 1, Watermark: 9})
	if !ok || out.Epoch != 1 || out.Watermark != 9 {
		t.Fatalf("epoch 1: got %v %v; want epoch 1 wm 9", out, ok)
	}
	out, ok = a.Mark(1, Marker{Epoch: 2, Watermark: 9, Final: true})
	if !ok || !out.Final || out.Watermark != MaxWatermark || !a.Done() {
		t.Fatalf("final: got %v %v done=%v; want final with max watermark", out, ok, a.Done())
	}
}

// TestAlignerRandom drives n senders that each emit a random number of
// epochs, delivering their messages in a random interleaving, and checks
// against a plain model that every epoch completes once, in order, with the
// minimum watermark, and that held-back messages are exactly those of senders
// ahead.
func TestAlignerSkippedEpochs(t *testing.T) {
	a := NewAligner(2)
	// Sender 0 fell behind the clock and ends epochs 0..4 at once.
	if _, ok := a.Mark(0, Marker{Epoch: 4, Watermark: 50}); ok {
		t.Fatal("completed before sender 1 ended epoch 0")
	}
	out, ok := a.Mark(1, Marker{Epoch: 0, Watermark: 10})
	if !ok || out.Epoch != 0 || out.Watermark != 10 {
		t.Fatalf("got %v %v; want epoch 0 wm 10", out, ok)
	}
	if !a.Ahead(0) || a.Ahead(1) {
		t.Fatal("sender 0 must stay ahead until epoch 4 ends everywhere")
	}
	out, ok = a.Mark(1, Marker{Epoch: 6, Watermark: 70})
	if !ok || out.Epoch != 4 || out.Watermark != 50 {
		t.Fatalf("got %v %v; want epochs 1..4 ended at once, wm 50", out, ok)
	}
	if a.Ahead(0) || !a.Ahead(1) || a.Current() != 5 {
		t.Fatalf("after epoch 4: Ahead(0)=%v Ahead(1)=%v Current=%d; want false true 5", a.Ahead(0), a.Ahead(1), a.Current())
	}
}

func TestAlignerRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 500; trial++ {
		n := 1 + r.IntN(5)
		type msg struct {
			sender int
			m      Marker
		}
		queues := make([][]msg, n)
		last := make([]int, n)
		wms := make([][]int64, n)
		for s := 0; s < n; s++ {
			epochs := 1 + r.IntN(6)
			last[s] = epochs - 1
			wm := int64(r.IntN(10))
			for e := 0; e < epochs; e++ {
				wm += int64(r.IntN(10))
				wms[s] = append(wms[s], wm)
				queues[s] = append(queues[s], msg{s, Marker{Epoch: Epoch(e), Watermark: wm, Final: e == epochs-1}})
			}
		}
		a := NewAligner(n)
		held := make([][]msg, n)
		var got []Marker
		var deliver func(x msg)
		deliver = func(x msg) {
			if a.Ahead(x.sender) {
				held[x.sender] = append(held[x.sender], x)
				return
			}
			out, ok := a.Mark(x.sender, x.m)
			if !ok {
				return
			}
			got = append(got, out)
			pending := held
			held = make([][]msg, n)
			for _, q := range pending {
				for _, y := range q {
					deliver(y)
				}
			}
		}
		for {
			var live []int
			for s := range queues {
				if len(queues[s]) > 0 {
					live = append(live, s)
				}
			}
			if len(live) == 0 {
				break
			}
			s := live[r.IntN(len(live))]
			x := queues[s][0]
			queues[s] = queues[s][1:]
			deliver(x)
		}
		maxLast := 0
		for _, l := range last {
			maxLast = max(maxLast, l)
		}
		if len(got) != maxLast+1 {
			t.Fatalf("trial %d: %d epochs completed; want %d", trial, len(got), maxLast+1)
		}
		prev := NoWatermark
		for e, m := range got {
			if m.Epoch != Epoch(e) {
				t.Fatalf("trial %d: completion %d is epoch %d", trial, e, m.Epoch)
			}
			if m.Watermark < prev {
				t.Fatalf("trial %d: watermark went back from %d to %d", trial, prev, m.Watermark)
			}
			want := MaxWatermark
			if e < maxLast {
				for s := 0; s < n; s++ {
					if e < last[s] {
						want = min(want, wms[s][e])
					}
				}
			}
			if want < prev {
				want = prev
			}
			if m.Watermark != want {
				t.Fatalf("trial %d: epoch %d watermark %d; want %d", trial, e, m.Watermark, want)
			}
			prev = m.Watermark
			if m.Final != (e == maxLast) {
				t.Fatalf("trial %d: epoch %d final=%v", trial, e, m.Final)
			}
		}
	}
}

// TestAlignerRandomJumps lets senders end several epochs with one marker
// and checks the properties the runtime relies on: completions are in
// increasing epoch order, each only once every sender has ended it, the
// watermark never goes back, nothing is held back forever, and the last
// completion is final and covers every sender's last epoch.
func TestAlignerRandomJumps(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 1000; trial++ {
		n := 1 + r.IntN(4)
		queues := make([][]Marker, n)
		maxEpoch := Epoch(0)
		for s := range queues {
			e := Epoch(r.IntN(3))
			for k := 0; k < 1+r.IntN(6); k++ {
				queues[s] = append(queues[s], Marker{Epoch: e, Watermark: int64(e) * 10})
				e += Epoch(1 + r.IntN(3))
			}
			queues[s][len(queues[s])-1].Final = true
			maxEpoch = max(maxEpoch, queues[s][len(queues[s])-1].Epoch)
		}
		a := NewAligner(n)
		delivered := make([]Epoch, n)
		has := make([]bool, n)
		var got []Marker
		deliverRandom(r, a, queues, func(s int, m, out Marker, ok bool) {
			delivered[s], has[s] = m.Epoch, true
			if !ok {
				return
			}
			for x := range delivered {
				if !has[x] || (delivered[x] < out.Epoch && len(queues[x]) > 0) {
					t.Fatalf("trial %d: epoch %d completed before sender %d ended it", trial, out.Epoch, x)
				}
			}
			if len(got) > 0 && (out.Epoch <= got[len(got)-1].Epoch || out.Watermark < got[len(got)-1].Watermark) {
				t.Fatalf("trial %d: completion %v after %v", trial, out, got[len(got)-1])
			}
			got = append(got, out)
		})
		for s := range queues {
			if len(queues[s]) > 0 {
				t.Fatalf("trial %d: sender %d stuck with %d markers", trial, s, len(queues[s]))
			}
		}
		last := got[len(got)-1]
		if !last.Final || last.Epoch != maxEpoch || !a.Done() {
			t.Fatalf("trial %d: last completion %v; want final at epoch %d", trial, last, maxEpoch)
		}
	}
}

// TestAlignerKeepsCutOfSenderAhead: a sender that ended epochs 0..4 at
// once, at cut time 100, must still count for epoch 4's cut after epoch 0
// completes without it.
func TestAlignerKeepsCutOfSenderAhead(t *testing.T) {
	a := NewAligner(2)
	a.Mark(0, Marker{Epoch: 4, Cut: 100})
	if out, ok := a.Mark(1, Marker{Epoch: 0, Cut: 50}); !ok || out.Cut != 50 {
		t.Fatalf("epoch 0: %v %v; want cut 50", out, ok)
	}
	out, ok := a.Mark(1, Marker{Epoch: 6, Cut: 200})
	if !ok || out.Epoch != 4 || out.Cut != 100 {
		t.Fatalf("epochs 1..4: %v %v; want epoch 4 with cut 100", out, ok)
	}
}

// deliverRandom feeds the queued markers of the senders that are not
// ahead to a, one at a time from a random such sender, until none is
// left to feed (what is left in queues is stuck). each sees every
// delivery and its result; queues has the marker removed by then.
func deliverRandom(r *rand.Rand, a *Aligner, queues [][]Marker, each func(s int, m, out Marker, ok bool)) {
	for {
		var ready []int
		for s := range queues {
			if len(queues[s]) > 0 && !a.Ahead(s) {
				ready = append(ready, s)
			}
		}
		if len(ready) == 0 {
			return
		}
		s := ready[r.IntN(len(ready))]
		m := queues[s][0]
		queues[s] = queues[s][1:]
		out, ok := a.Mark(s, m)
		each(s, m, out, ok)
	}
}
