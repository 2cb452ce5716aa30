package partition

import "testing"

func TestStrategyNames(t *testing.T) {
	for _, s := range Strategies() {
		got, err := ParseStrategy(s.String())
		if err != nil || got != s {
			t.Errorf("ParseStrategy(%q) = %v, %v; want %v", s.String(), got, err, s)
		}
	}
	if _, err := ParseStrategy("zipf"); err == nil {
		t.Errorf("ParseStrategy(%q) succeeded", "zipf")
	}
	if got := Strategy(9).String(); got != "Strategy(9)" {
		t.Errorf("Strategy(9).String() = %q", got)
	}
}

func TestRoundRobinBlock(t *testing.T) {
	for _, tc := range []struct {
		n      int64
		blocks int
	}{{0, 3}, {1, 1}, {1, 4}, {10, 3}, {1000, 7}, {5, 8}} {
		sizes := make([]int64, tc.blocks)
		prev := 0
		for pos := range tc.n {
			b := RoundRobinBlock(pos, tc.n, tc.blocks)
			if b < prev || b >= tc.blocks {
				t.Fatalf("RoundRobinBlock(%d, %d, %d) = %d after %d", pos, tc.n, tc.blocks, b, prev)
			}
			prev = b
			sizes[b]++
		}
		for b, s := range sizes {
			if s*int64(tc.blocks) < tc.n-int64(tc.blocks) || s*int64(tc.blocks) > tc.n+int64(tc.blocks) {
				t.Errorf("n=%d blocks=%d: block %d has %d records", tc.n, tc.blocks, b, s)
			}
		}
	}
}

func TestImbalance(t *testing.T) {
	var b Imbalance
	if b.Value() != 1 || b.Epochs() != 0 {
		t.Fatalf("empty Imbalance = %v over %d epochs; want 1 over 0", b.Value(), b.Epochs())
	}
	b.Add(nil)
	b.Add([]int64{0, 0})
	b.Add([]int64{10, 10})   // max 10, mean 10
	b.Add([]int64{30, 0, 0}) // max 30, mean 10
	if got, want := b.Value(), 40.0/20; got != want || b.Epochs() != 2 {
		t.Errorf("Imbalance = %v over %d epochs; want %v over 2", got, b.Epochs(), want)
	}
}
