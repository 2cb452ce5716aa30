package checkpoint

import "testing"

// A buffer is kept as a blob when at most a quarter of it would be idle,
// and such a blob of a poolable size is marked to go back to the pool.
func TestFitsAndOwnedBlob(t *testing.T) {
	for _, c := range []struct {
		n, cap int
		want   bool
	}{{100, 100, true}, {75, 100, true}, {74, 100, false}, {0, 64, false}, {48 << 10, 64 << 10, true}} {
		if got := Fits(make([]byte, c.n, c.cap)); got != c.want {
			t.Errorf("Fits(len %d, cap %d) = %v; want %v", c.n, c.cap, got, c.want)
		}
	}
	big := Buffer(64 << 10)
	if b := OwnedBlob("op", 3, big); !b.Pooled || b.KeyGroup != 3 || &b.Data[0] != &big[0] {
		t.Errorf("OwnedBlob of a pool buffer: %+v; want it marked Pooled, holding the same buffer", b.Pooled)
	}
	if b := OwnedBlob("op", 3, make([]byte, 10)); b.Pooled {
		t.Error("OwnedBlob of a small buffer is marked Pooled; the pool takes none below poolFloor")
	}
}
