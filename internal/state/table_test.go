package state

import (
	"math/rand/v2"
	"testing"
)

// TestTableAgainstMap runs random operations against a Table and a Go map
// and compares them after every step. Hashes are taken from a small range so
// that collisions and long probe runs are frequent.
func TestTableAgainstMap(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	for trial := 0; trial < 50; trial++ {
		tab := NewTable[int, int](0)
		model := map[int]int{}
		hash := func(k int) uint64 { return uint64(k%37) * 0x9e3779b97f4a7c15 }
		for op := 0; op < 3000; op++ {
			k := r.IntN(400)
			switch r.IntN(4) {
			case 0, 1:
				*tab.Upsert(hash(k), k) += k + 1
				model[k] += k + 1
			case 2:
				tab.Delete(hash(k), k)
				delete(model, k)
			case 3:
				p := tab.Get(hash(k), k)
				v, ok := model[k]
				if (p != nil) != ok || (ok && *p != v) {
					t.Fatalf("trial %d op %d: Get(%d) = %v; want %v,%v", trial, op, k, p, v, ok)
				}
			}
			if tab.Len() != len(model) {
				t.Fatalf("trial %d op %d: Len = %d; want %d", trial, op, tab.Len(), len(model))
			}
		}
		tab.DeleteFunc(func(k int, v *int) bool { return k%2 == 0 })
		for k := range model {
			if k%2 == 0 {
				delete(model, k)
			}
		}
		n := 0
		tab.Range(func(h uint64, k int, v *int) bool {
			n++
			if model[k] != *v {
				t.Fatalf("Range: %d -> %d; want %d", k, *v, model[k])
			}
			return true
		})
		if n != len(model) {
			t.Fatalf("Range saw %d entries; want %d", n, len(model))
		}
	}
}

func TestZeroHash(t *testing.T) {
	tab := NewTable[string, int](0)
	*tab.Upsert(0, "a") = 1
	*tab.Upsert(1, "b") = 2
	if p := tab.Get(0, "a"); p == nil || *p != 1 {
		t.Fatalf("Get(0, a) = %v; want 1", p)
	}
	if p := tab.Get(1, "b"); p == nil || *p != 2 {
		t.Fatalf("Get(1, b) = %v; want 2", p)
	}
}

func BenchmarkUpsert(b *testing.B) {
	tab := NewTable[uint64, int64](0)
	for i := uint64(0); i < 1000; i++ {
		*tab.Upsert(i*0x9e3779b97f4a7c15, i)++
	}
	i := uint64(0)
	for b.Loop() {
		k := i % 1000
		*tab.Upsert(k*0x9e3779b97f4a7c15, k)++
		i++
	}
}

func TestClearShrinksAfterPeak(t *testing.T) {
	tab := NewTable[int, int](0)
	for i := 0; i < 100000; i++ {
		*tab.Upsert(uint64(i)*0x9e3779b97f4a7c15, i) = i
	}
	tab.Clear()
	if tab.Len() != 0 || len(tab.slots) < 100000 {
		t.Fatalf("Clear of a full table: Len %d, %d slots; want 0 and the capacity kept", tab.Len(), len(tab.slots))
	}
	*tab.Upsert(1, 1) = 1
	tab.Clear()
	if len(tab.slots) > 1024 {
		t.Fatalf("Clear of a nearly empty big table kept %d slots", len(tab.slots))
	}
	*tab.Upsert(7, 7) = 7
	if p := tab.Get(7, 7); p == nil || *p != 7 {
		t.Fatalf("table unusable after shrinking")
	}
}
