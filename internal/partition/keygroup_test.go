package partition

import (
	"fmt"
	"testing"
)

func TestOwnerMatchesRange(t *testing.T) {
	for _, k := range []int{1, 7, 128, 1000} {
		for p := 1; p <= 17 && p <= k; p++ {
			seen := 0
			for i := 0; i < p; i++ {
				r := RangeOf(i, k, p)
				if r.Len() == 0 {
					t.Errorf("RangeOf(%d, %d, %d) is empty", i, k, p)
				}
				for kg := r.Start; kg < r.End; kg++ {
					if got := Owner(kg, k, p); got != i {
						t.Fatalf("Owner(%d, %d, %d) = %d; want %d (range %v)", kg, k, p, got, i, r)
					}
					seen++
				}
			}
			if seen != k {
				t.Errorf("k=%d p=%d: ranges cover %d key groups; want %d", k, p, seen, k)
			}
		}
	}
}

func TestKeyGroupOfUniform(t *testing.T) {
	const k, n = 128, 128 * 1000
	counts := make([]int, k)
	for i := 0; i < n; i++ {
		kg := KeyGroupOf(HashString(fmt.Sprintf("key-%d", i)), k)
		if int(kg) >= k {
			t.Fatalf("KeyGroupOf = %d; want < %d", kg, k)
		}
		counts[kg]++
	}
	for kg, c := range counts {
		if c < 800 || c > 1200 {
			t.Errorf("key group %d got %d of %d keys; want about %d", kg, c, n, n/k)
		}
	}
}

func TestHashDeterministic(t *testing.T) {
	// Fixed values: a change here changes the key-group layout of every
	// saved checkpoint, so it must be deliberate.
	a, b := HashString("campaign"), HashString("campaign")
	if a != b {
		t.Fatalf("HashString not stable: %x vs %x", a, b)
	}
	h, det := Hasher[string]()
	if !det || h("campaign") != a {
		t.Errorf("Hasher[string] disagrees with HashString")
	}
	hi, det := Hasher[int64]()
	if !det || hi(42) != HashUint64(42) {
		t.Errorf("Hasher[int64] disagrees with HashUint64")
	}
	seen := map[uint64]string{}
	for i := 0; i < 100000; i++ {
		s := fmt.Sprint(i)
		x := HashString(s)
		if prev, ok := seen[x]; ok {
			t.Fatalf("collision between %q and %q", prev, s)
		}
		seen[x] = s
	}
}

func BenchmarkHashString36(b *testing.B) {
	s := "6c3e4a3a-1b7b-4f43-9a53-3e1f0a9c2d11"
	var sink uint64
	for b.Loop() {
		sink += HashString(s)
	}
	_ = sink
}

type word string
type small int16

func TestHasherUnderlyingKinds(t *testing.T) {
	hw, det := Hasher[word]()
	if !det || hw("campaign") != HashString("campaign") {
		t.Errorf("Hasher[word] is not the string hash")
	}
	hs, det := Hasher[small]()
	if !det || hs(-3) == hs(3) {
		t.Errorf("Hasher[small] = deterministic %v, h(-3) == h(3)", det)
	}
	type pair struct{ a, b int }
	if _, det := Hasher[pair](); det {
		t.Errorf("Hasher[struct] claims to be deterministic")
	}
	// The one value of an empty struct (WindowAll's key) hashes to a
	// constant, the same in every process.
	if he, det := Hasher[struct{}](); !det || he(struct{}{}) != HashUint64(0) {
		t.Errorf("Hasher[struct{}] = deterministic %v, not the constant", det)
	}
}
