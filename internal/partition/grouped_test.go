package partition

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// TestGroupedAgainstModel adds records to slots drawn from a skewed
// distribution, over several epochs on one Grouped, and checks every slot's
// records and random sub-ranges against a plain slice per slot.
func TestGroupedAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var g Grouped[int]
	for epoch := range 4 {
		n := []int{10, 200000, 3000, 150000}[epoch]
		model := [][]int{}
		for i := range n {
			var s int
			if r.IntN(3) == 0 {
				s = 0 // a hot slot, beyond many chunks and blocks
			} else {
				s = int(r.ExpFloat64() * 50)
			}
			if s > len(model) {
				s = len(model)
			}
			if s == len(model) {
				model = append(model, nil)
			}
			g.Add(int32(s), i)
			model[s] = append(model[s], i)
		}
		for s, want := range model {
			if g.Len(int32(s)) != len(want) {
				t.Fatalf("epoch %d slot %d: Len %d, want %d", epoch, s, g.Len(int32(s)), len(want))
			}
			check := func(lo, hi int) {
				var got []int
				g.Range(int32(s), lo, hi, func(run []int) {
					if len(run) == 0 {
						t.Fatalf("empty run")
					}
					got = append(got, run...)
				})
				if !slices.Equal(got, want[lo:hi]) {
					t.Fatalf("epoch %d slot %d range [%d,%d): got %d records, want %d", epoch, s, lo, hi, len(got), hi-lo)
				}
			}
			check(0, len(want))
			for range 5 {
				lo := r.IntN(len(want) + 1)
				hi := lo + r.IntN(len(want)-lo+1)
				check(lo, hi)
			}
		}
		g.Reset()
	}
}

func TestGroupedResetClears(t *testing.T) {
	var g Grouped[*int]
	x := 7
	for range 100 {
		g.Add(0, &x)
	}
	g.Reset()
	for _, b := range g.blocks {
		for _, p := range b {
			if p != nil {
				t.Fatal("Reset kept a pointer alive")
			}
		}
	}
}

func TestGroupedAddDoesNotAllocate(t *testing.T) {
	var g Grouped[[3]int64]
	fill := func() {
		for i := range 100000 {
			g.Add(int32(min(i%7, i)), [3]int64{int64(i)})
		}
		g.Reset()
	}
	fill()
	if a := testing.AllocsPerRun(5, fill); a != 0 {
		t.Errorf("%v allocations per epoch after the first", a)
	}
}

func TestPointerFree(t *testing.T) {
	type plain struct {
		A int64
		B [2]float64
	}
	type ptr struct {
		A int64
		S string
	}
	for _, c := range []struct {
		v    any
		want bool
	}{{int64(0), true}, {plain{}, true}, {ptr{}, false}, {"", false}, {[]int{}, false}, {[1]*int{}, false}} {
		if got := pointerFree(reflect.TypeOf(c.v)); got != c.want {
			t.Errorf("pointerFree(%T) = %v, want %v", c.v, got, c.want)
		}
	}
}

func TestCountBufferUnordered(t *testing.T) {
	b := NewCountBuffer[string](false)
	for _, k := range []string{"a", "b", "a", "c", "a", "b"} {
		b.Add(HashString(k), k)
	}
	if b.ByCount() != nil || b.Len() != 6 || b.Keys() != 3 || b.Count(0) != 3 || b.Count(1) != 2 || b.Count(2) != 1 {
		t.Fatalf("unordered count buffer: len %d keys %d counts %d %d %d order %v", b.Len(), b.Keys(), b.Count(0), b.Count(1), b.Count(2), b.ByCount())
	}
	o := NewCountBuffer[string](true)
	for _, k := range []string{"a", "b", "a", "c", "a", "b"} {
		o.Add(HashString(k), k)
	}
	if got := o.ByCount(); len(got) != 3 || got[0] != 0 || got[1] != 1 || got[2] != 2 {
		t.Fatalf("ordered count buffer: order %v", got)
	}
}
