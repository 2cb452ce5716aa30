package partition

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestContiguousIsTheRanges(t *testing.T) {
	for _, k := range []int{1, 2, 7, 128, 1000} {
		for _, p := range []int{1, 2, 3, 5, 128} {
			if p > k {
				continue
			}
			tab := Contiguous(k, p)
			if tab.Groups() != k || tab.Instances() != p {
				t.Fatalf("Contiguous(%d, %d) has %d groups over %d instances", k, p, tab.Groups(), tab.Instances())
			}
			for i := 0; i < p; i++ {
				r := RangeOf(i, k, p)
				var want []KeyGroup
				for kg := r.Start; kg < r.End; kg++ {
					want = append(want, kg)
				}
				if got := tab.Owned(i); !slices.Equal(got, want) {
					t.Fatalf("Contiguous(%d, %d).Owned(%d) = %v; want %v", k, p, i, got, want)
				}
			}
			for kg := 0; kg < k; kg++ {
				if got, want := tab.Owner(KeyGroup(kg)), Owner(KeyGroup(kg), k, p); got != want {
					t.Fatalf("Contiguous(%d, %d).Owner(%d) = %d; want %d", k, p, kg, got, want)
				}
			}
		}
	}
}

func TestTableRoutesByItsData(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const k, p = 64, 5
	owner := make([]int, k)
	for kg := range owner {
		owner[kg] = r.IntN(p)
	}
	tab, err := NewTable(7, p, owner)
	if err != nil {
		t.Fatal(err)
	}
	if tab.From != 7 {
		t.Fatalf("From = %d; want 7", tab.From)
	}
	for range 10000 {
		h := r.Uint64()
		kg := KeyGroupOf(h, k)
		if got := tab.Route(h); got != owner[kg] {
			t.Fatalf("Route(%#x) = %d; want owner[%d] = %d", h, got, kg, owner[kg])
		}
		if !tab.Owns(owner[kg], kg) || tab.Owns((owner[kg]+1)%p, kg) {
			t.Fatalf("Owns disagrees with the owners for key group %d", kg)
		}
	}
	seen := 0
	for i := 0; i < p; i++ {
		for _, kg := range tab.Owned(i) {
			if owner[kg] != i {
				t.Fatalf("Owned(%d) lists key group %d of instance %d", i, kg, owner[kg])
			}
			seen++
		}
	}
	if seen != k {
		t.Fatalf("Owned lists %d key groups over the instances; want %d", seen, k)
	}
}

// Span counts the instances up to the highest owner, whoever owns less.
func TestTableSpan(t *testing.T) {
	for _, c := range []struct {
		owner []int
		of    int
		want  int
	}{{[]int{0, 0, 0}, 4, 1}, {[]int{0, 2, 1}, 4, 3}, {[]int{3, 0, 0}, 4, 4}, {[]int{1, 1}, 4, 2}} {
		tab, err := NewTable(0, c.of, c.owner)
		if err != nil {
			t.Fatal(err)
		}
		if got := tab.Span(); got != c.want {
			t.Errorf("Span of %v = %d; want %d", c.owner, got, c.want)
		}
	}
	if got := Contiguous(128, 5).Span(); got != 5 {
		t.Errorf("Span of 128 key groups over 5 = %d", got)
	}
}

func TestNewTableRefuses(t *testing.T) {
	for _, c := range []struct {
		name      string
		instances int
		owner     []int
	}{
		{"no instances", 0, []int{0}},
		{"no key groups", 2, nil},
		{"owner out of range", 2, []int{0, 2}},
		{"negative owner", 2, []int{-1, 0}},
		{"too many instances", maxInstances + 1, []int{0}},
	} {
		if _, err := NewTable(0, c.instances, c.owner); err == nil {
			t.Errorf("NewTable(%s) = nil error; want one", c.name)
		}
	}
}
