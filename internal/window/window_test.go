package window

import (
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
)

func TestAssign(t *testing.T) {
	tests := []struct {
		spec Spec
		ts   int64
		want [][2]int64
	}{
		{Spec{Kind: Tumbling, Size: 10}, 0, [][2]int64{{0, 10}}},
		{Spec{Kind: Tumbling, Size: 10}, 19, [][2]int64{{10, 20}}},
		{Spec{Kind: Tumbling, Size: 10}, -1, [][2]int64{{-10, 0}}},
		{Spec{Kind: Sliding, Size: 10, Slide: 5}, 7, [][2]int64{{5, 15}, {0, 10}}},
		{Spec{Kind: Sliding, Size: 10, Slide: 5}, 10, [][2]int64{{10, 20}, {5, 15}}},
		{Spec{Kind: Sliding, Size: 10, Slide: 3}, 4, [][2]int64{{3, 13}, {0, 10}, {-3, 7}}},
		{Spec{Kind: Global}, 123, [][2]int64{{GlobalStart, GlobalEnd}}},
	}
	for _, tt := range tests {
		var got [][2]int64
		tt.spec.Assign(tt.ts, func(s, e int64) { got = append(got, [2]int64{s, e}) })
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v.Assign(%d) = %v; want %v", tt.spec, tt.ts, got, tt.want)
		}
	}
}

func TestValidate(t *testing.T) {
	bad := []Spec{{Kind: Tumbling}, {Kind: Sliding, Size: 1}, {Kind: Session}, {Kind: Global, Lateness: -1}, {Kind: Kind(9)}}
	for _, s := range bad {
		if s.Validate() == nil {
			t.Errorf("Validate(%+v) = nil; want an error", s)
		}
	}
}

func TestFireAndLateness(t *testing.T) {
	var s Set[int]
	w := s.Get(0, 10, nil)
	w.Acc += 1
	var fired []int
	emit := func(w *Win[int]) { fired = append(fired, w.Acc) }
	if next := s.Fire(8, 5, emit); len(fired) != 0 || next != 9 {
		t.Fatalf("Fire(8) fired %v next %d; want nothing, next 9", fired, next)
	}
	if next := s.Fire(9, 5, emit); !reflect.DeepEqual(fired, []int{1}) || next != 14 {
		t.Fatalf("Fire(9) fired %v next %d; want [1], next 14", fired, next)
	}
	// A late record within the allowed lateness updates and re-fires.
	w = s.Get(0, 10, nil)
	w.Acc += 1
	w.Touch()
	s.Fire(12, 5, emit)
	if !reflect.DeepEqual(fired, []int{1, 2}) {
		t.Fatalf("after late update fired %v; want [1 2]", fired)
	}
	s.Fire(14, 5, emit)
	if len(s.W) != 0 {
		t.Fatalf("window kept past cleanup: %v", s.W)
	}
	if !(Spec{Kind: Tumbling, Size: 10, Lateness: 5}).Late(10, 14) {
		t.Error("Late(10, 14) = false; want true")
	}
}

// TestSessionsAgainstModel adds random timestamps to a session Set and
// compares the resulting sessions with a plain computation: sort the
// timestamps and cut wherever the next one is at least gap away.
func TestSessionsAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 300; trial++ {
		gap := int64(1 + r.IntN(10))
		var s Set[int]
		var ts []int64
		for i := 0; i < 1+r.IntN(30); i++ {
			x := int64(r.IntN(200))
			ts = append(ts, x)
			w := s.AddSession(x, gap, 0, -1<<62, nil, func(a, b int) int { return a + b })
			w.Acc++
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		type sess struct {
			start, end int64
			n          int
		}
		var want []sess
		for _, x := range ts {
			if len(want) > 0 && x < want[len(want)-1].end {
				want[len(want)-1].end = max(want[len(want)-1].end, x+gap)
				want[len(want)-1].n++
				continue
			}
			want = append(want, sess{x, x + gap, 1})
		}
		var got []sess
		for _, w := range s.W {
			got = append(got, sess{w.Start, w.End, w.Acc})
		}
		sort.Slice(got, func(i, j int) bool { return got[i].start < got[j].start })
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d gap %d ts %v:\n got %v\nwant %v", trial, gap, ts, got, want)
		}
	}
}

func TestSessionLate(t *testing.T) {
	var s Set[int]
	if w := s.AddSession(5, 3, 0, 100, nil, nil); w != nil {
		t.Errorf("AddSession past cleanup returned a window %+v; want nil", *w)
	}
}

func TestTumblingCache(t *testing.T) {
	var c TumblingCache
	r := rand.New(rand.NewPCG(5, 6))
	ts := int64(-5000)
	for i := 0; i < 10000; i++ {
		ts += int64(r.IntN(7)) - 2 // mostly forward, sometimes back
		start, end, ok := c.Window(ts, 10)
		want := floorDiv(ts, 10) * 10
		if !ok || start != want || end != want+10 {
			t.Fatalf("Window(%d, 10) = [%d, %d); want [%d, %d)", ts, start, end, want, want+10)
		}
	}
}

// TestSpanned compares Spanned with the distinct windows Assign gives every
// time in [lo, hi].
func TestSpanned(t *testing.T) {
	specs := []Spec{
		{Kind: Tumbling, Size: 10},
		{Kind: Sliding, Size: 10, Slide: 3},
		{Kind: Sliding, Size: 9, Slide: 3},
		{Kind: Global},
	}
	for _, s := range specs {
		for lo := int64(-25); lo < 25; lo += 7 {
			for hi := lo; hi < lo+40; hi += 5 {
				seen := map[[2]int64]bool{}
				for ts := lo; ts <= hi; ts++ {
					s.Assign(ts, func(start, end int64) { seen[[2]int64{start, end}] = true })
				}
				if got := s.Spanned(lo, hi); got < int64(len(seen)) || got > int64(len(seen))+s.Size/max(s.Slide, 1) {
					t.Errorf("%v Spanned(%d, %d) = %d; Assign gives %d windows", s, lo, hi, got, len(seen))
				}
			}
		}
	}
}
