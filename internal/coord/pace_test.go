package coord

import "testing"

// With no step every due checkpoint is taken; a step from an epoch on
// takes every Stride-th interval from there; a step heard again, one of
// the same epoch with a smaller stride, or a stride out of range changes
// nothing.
func TestPaceTakes(t *testing.T) {
	var p Pace
	for n := uint64(0); n <= 100; n += 10 {
		if !p.Takes(n, 10) {
			t.Fatalf("no step: checkpoint %d skipped", n)
		}
	}
	if !p.Add(PaceStep{From: 55, Stride: 4}) {
		t.Fatal("a first step was not taken")
	}
	want := map[uint64]bool{50: true, 60: false, 70: false, 80: true, 90: false, 120: true}
	for n, w := range want {
		if got := p.Takes(n, 10); got != w {
			t.Errorf("stride 4 from 55: Takes(%d) = %v, want %v", n, got, w)
		}
	}
	if p.Add(PaceStep{From: 55, Stride: 4}) || p.Add(PaceStep{From: 55, Stride: 2}) || p.Add(PaceStep{From: 90, Stride: 0}) || p.Add(PaceStep{From: 90, Stride: MaxStride + 1}) {
		t.Error("a step heard again, a smaller one of the same epoch, or one out of range, was taken")
	}
	if p.Stride(200) != 4 || p.Last() != (PaceStep{From: 55, Stride: 4}) {
		t.Errorf("stride %d, last %+v", p.Stride(200), p.Last())
	}
	for i := range 20 {
		p.Add(PaceStep{From: uint64(100 + 10*i), Stride: uint64(1 + i%3)})
	}
	if len(p.steps) > 8 || p.Stride(1000) != 1+19%3 {
		t.Errorf("%d steps kept, stride %d", len(p.steps), p.Stride(1000))
	}
	// A checkpoint before the oldest step kept gets the stride of the
	// step dropped last, which was in force for it.
	if oldest := p.steps[0].From; p.Stride(oldest-1) != 1+11%3 {
		t.Errorf("before the oldest step kept (%d): stride %d, want %d", oldest, p.Stride(oldest-1), 1+11%3)
	}
	// A step dropped already, heard again (a peer passes on the newest
	// it knows), changes nothing.
	for i := range 12 {
		if p.Add(PaceStep{From: uint64(100 + 10*i), Stride: uint64(1 + i%3)}) {
			t.Errorf("the dropped step from %d, heard again, was taken", 100+10*i)
		}
	}
	if oldest := p.steps[0].From; p.Stride(oldest-1) != 1+11%3 || len(p.steps) != 8 {
		t.Errorf("after dropped steps heard again: stride %d before %d, %d steps", p.Stride(oldest-1), oldest, len(p.steps))
	}
}

// Steps of two leaders, one after the other, put the same strides in
// force whatever the order they are heard in: by their epochs, and of
// two from one epoch the larger.
func TestPaceOrderFree(t *testing.T) {
	steps := []PaceStep{{From: 40, Stride: 2}, {From: 70, Stride: 8}, {From: 55, Stride: 4}, {From: 55, Stride: 16}, {From: 90, Stride: 1}}
	want := map[uint64]uint64{30: 1, 40: 2, 54: 2, 55: 16, 69: 16, 70: 8, 89: 8, 90: 1, 500: 1}
	perm := [][]int{{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {2, 0, 4, 3, 1}, {3, 2, 1, 0, 4}}
	for _, order := range perm {
		var p Pace
		for _, i := range order {
			p.Add(steps[i])
		}
		for n, w := range want {
			if got := p.Stride(n); got != w {
				t.Errorf("heard in order %v: stride %d for checkpoint %d, want %d", order, got, n, w)
			}
		}
	}
}

// The stride doubles while the slowest writes lag two taken checkpoints
// or more behind, up to MaxStride, stays while they lag one, and halves
// after calmDecisions decisions in a row that find them caught up.
func TestPaceDecide(t *testing.T) {
	const every = 10
	var p Pace
	if s, ok := p.Decide(1_000_000, every, 0, 1_000_015); ok {
		t.Fatalf("nothing written yet: changed to %+v", s)
	}
	// Caught up: the slowest wrote the checkpoint before n.
	for n := uint64(10); n <= 100; n += every {
		if s, ok := p.Decide(n, every, n-every, n+15); ok {
			t.Fatalf("caught up at %d: changed to %+v", n, s)
		}
	}
	// Two behind: n and the one before wait.
	s, ok := p.Decide(110, every, 90, 125)
	if !ok || s != (PaceStep{From: 125, Stride: 2}) {
		t.Fatalf("two behind: %+v %v, want stride 2 from 125", s, ok)
	}
	if p.Stride(130) != 2 || p.Stride(120) != 1 {
		t.Fatal("the step was not put in force from its epoch")
	}
	// Far behind: doubling to the cap and no further.
	n := uint64(140)
	for range 10 {
		s, ok = p.Decide(n, every, every, n+15)
		n += every * p.Stride(n+15)
	}
	if p.Stride(n) != MaxStride {
		t.Fatalf("far behind: stride %d, want %d", p.Stride(n), MaxStride)
	}
	if ok {
		t.Errorf("at the cap: changed again to %+v", s)
	}
	// Caught up: halving only after calmDecisions in a row, a lag in
	// between starting the count again.
	for i := 1; i < calmDecisions; i++ {
		if _, ok := p.Decide(n, every, n-every*MaxStride, n+15); ok {
			t.Fatalf("halved after %d calm decisions", i)
		}
		n += every * MaxStride
	}
	if s, ok := p.Decide(n, every, n-every*MaxStride, n+15); !ok || s.Stride != MaxStride/2 {
		t.Fatalf("after %d calm decisions: %+v %v, want stride %d", calmDecisions, s, ok, MaxStride/2)
	}
	// A part not written of the taken checkpoint before n is a lag of
	// two again: the stride doubles back.
	n += every * MaxStride
	stride := p.Stride(n + 15)
	n += every * stride
	if s, ok := p.Decide(n, every, n-every*stride-every, n+15); !ok || s.Stride != stride*2 {
		t.Fatalf("two behind after halving: %+v %v, want stride %d", s, ok, stride*2)
	}
}

// A change takes force no earlier than asked and always after the last
// step, so that steps stay in increasing order.
func TestPaceDecideFromAfterLast(t *testing.T) {
	var p Pace
	p.Add(PaceStep{From: 500, Stride: 1})
	s, ok := p.Decide(100, 10, 10, 120)
	if !ok || s.From != 501 {
		t.Fatalf("%+v %v: want a step from 501", s, ok)
	}
}

// A slowest process that is catching up (fewer checkpoints waiting than
// at the last decision, the ones taken before a change still being
// written) does not double the stride again; one that stops catching up
// does.
func TestPaceDecideCatchingUp(t *testing.T) {
	const every = 10
	var p Pace
	if s, ok := p.Decide(1000, every, 950, 2000); !ok || s.Stride != 2 {
		t.Fatalf("5 waiting: %+v %v, want stride 2", s, ok)
	}
	if s, ok := p.Decide(1010, every, 970, 2010); ok {
		t.Fatalf("4 waiting after 5: changed to %+v", s)
	}
	if s, ok := p.Decide(1020, every, 980, 2020); !ok || s.Stride != 2 || s.From != 2020 {
		t.Fatalf("4 waiting again: %+v %v, want stride 2 from 2020", s, ok)
	}
}
