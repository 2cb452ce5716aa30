package partition

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestTwoChoicesCandidates(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, blocks := range []int{1, 2, 3, 7, 64, 200, 1024} {
		hits := make([]int, blocks)
		for range 20000 {
			h := rng.Uint64()
			a, b := candidates(h, blocks)
			if a < 0 || a >= blocks || b < 0 || b >= blocks {
				t.Fatalf("candidates(%x, %d) = %d, %d; want in [0, %d)", h, blocks, a, b, blocks)
			}
			if blocks > 1 && a == b {
				t.Fatalf("candidates(%x, %d) = %d twice; want two blocks", h, blocks, a)
			}
			hits[a]++
			hits[b]++
			p := NewTwoChoices(blocks)
			if got := p.Choose(h); got != a && got != b {
				t.Fatalf("Choose(%x) over %d blocks = %d; want %d or %d", h, blocks, got, a, b)
			}
		}
		// Every block is someone's candidate (unlike HashIndex, which
		// reaches at most DefaultKeyGroups blocks).
		if slices.Contains(hits, 0) {
			t.Errorf("%d blocks: some block is never a candidate", blocks)
		}
	}
}

func TestTwoChoicesBalance(t *testing.T) {
	for _, blocks := range []int{2, 8, 64} {
		p := NewTwoChoices(blocks)
		loads := make([]int64, blocks)
		// Uniform keys: near equal loads.
		for i := range 100000 {
			loads[p.Choose(HashUint64(uint64(i)))]++
		}
		var imb Imbalance
		imb.Add(loads)
		if imb.Value() > 1.02 {
			t.Errorf("%d blocks, uniform keys: imbalance %.3f (%v); want <= 1.02", blocks, imb.Value(), loads)
		}

		// One hot key: split evenly over exactly two blocks.
		p.Reset(blocks)
		clear(loads)
		h := HashString("hot")
		for range 1001 {
			loads[p.Choose(h)]++
		}
		var used []int64
		for _, l := range loads {
			if l > 0 {
				used = append(used, l)
			}
		}
		if len(used) != 2 || used[0]+used[1] != 1001 || max(used[0], used[1])-min(used[0], used[1]) > 1 {
			t.Errorf("%d blocks, one key: loads %v; want 500 and 501 in two blocks", blocks, loads)
		}
	}
}

func TestTwoChoicesOneBlock(t *testing.T) {
	p := NewTwoChoices(1)
	for i := range 100 {
		if b := p.Choose(HashUint64(uint64(i))); b != 0 {
			t.Fatalf("Choose over one block = %d", b)
		}
	}
	p.Reset(3)
	for i := range 100 {
		if b := p.Choose(HashUint64(uint64(i))); b < 0 || b >= 3 {
			t.Fatalf("after Reset(3): Choose = %d", b)
		}
	}
}
