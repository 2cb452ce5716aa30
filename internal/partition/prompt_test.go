package partition

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// zipfWeights returns the weights i^-s of keys 1..n (all 1 when s is 0).
func zipfWeights(n int, s float64) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = math.Pow(float64(i+1), -s)
	}
	return w
}

// zipfCounts gives about n records to keys keys in proportion to Zipf
// weights with exponent s, every key at least one record, in shuffled key
// order.
func zipfCounts(rng *rand.Rand, keys int, n int64, s float64) []int32 {
	w := zipfWeights(keys, s)
	var sum float64
	for _, x := range w {
		sum += x
	}
	counts := make([]int32, keys)
	for i, x := range w {
		counts[i] = int32(max(1, math.Round(float64(n)*x/sum)))
	}
	rng.Shuffle(keys, func(i, j int) { counts[i], counts[j] = counts[j], counts[i] })
	return counts
}

type planCase struct {
	name              string
	counts            []int32
	blocks, reducers  int
	strictMapBalance  bool // D >= 20N
	strictReduceCheck bool
}

func (c planCase) String() string {
	return fmt.Sprintf("%s (keys %d, blocks %d, reducers %d)", c.name, len(c.counts), c.blocks, c.reducers)
}

// randomPlanCases draws the property-test cases.
func randomPlanCases(rng *rand.Rand, n int) []planCase {
	var cases []planCase
	for i := range n {
		blocks, reducers := 1+rng.IntN(64), 1+rng.IntN(64)
		var name string
		var counts []int32
		switch i % 9 {
		case 0, 1, 2, 3:
			s := []float64{0.8, 1.0, 1.5, 2.0}[i%4]
			keys := 1 + rng.IntN(3000)
			name = fmt.Sprintf("zipf %.1f", s)
			counts = zipfCounts(rng, keys, int64(keys)*int64(1+rng.IntN(50)), s)
		case 4:
			name = "uniform"
			keys := 1 + rng.IntN(3000)
			counts = zipfCounts(rng, keys, int64(keys)*int64(1+rng.IntN(20)), 0)
		case 5:
			name = "single key"
			counts = []int32{int32(1 + rng.IntN(100000))}
		case 6:
			name = "fewer keys than blocks"
			blocks = 2 + rng.IntN(63)
			keys := 1 + rng.IntN(blocks-1)
			counts = zipfCounts(rng, keys, int64(keys)*int64(1+rng.IntN(1000)), rng.Float64()*2)
		case 7:
			name = "random counts"
			counts = make([]int32, 1+rng.IntN(2000))
			for g := range counts {
				counts[g] = int32(1 + rng.IntN(1+rng.IntN(10000)))
			}
		case 8:
			// Many hot keys of similar size next to tiny cold keys: whole
			// hot keys leave small rooms, which can force phase 1 to
			// pack (TestPromptPackFallback).
			name = "similar hot keys"
			hot := blocks + rng.IntN(2*blocks)
			size := 100 + rng.IntN(1000)
			for range hot {
				counts = append(counts, int32(size-rng.IntN(size/5)))
			}
			for range rng.IntN(20 * blocks) {
				counts = append(counts, int32(1+rng.IntN(3)))
			}
			rng.Shuffle(len(counts), func(i, j int) { counts[i], counts[j] = counts[j], counts[i] })
		}
		cases = append(cases, planCase{name: name, counts: counts, blocks: blocks, reducers: reducers})
	}
	return cases
}

// checkPromptPlan checks every property a Prompt plan promises.
func checkPromptPlan(t *testing.T, c planCase, pl *Plan) {
	t.Helper()
	checkPlanShape(t, c, pl, Prompt)
	var n int64
	var maxCold int64
	d := int64(len(c.counts))
	for _, x := range c.counts {
		n += int64(x)
	}
	for _, x := range c.counts {
		if int64(x)*d <= n {
			maxCold = max(maxCold, int64(x))
		}
	}
	if d == 0 {
		return
	}
	target := (n + int64(c.blocks) - 1) / int64(c.blocks)
	for g, x := range c.counts {
		fs := pl.Fragments(g)
		hot := int64(x)*d > n
		limit := 1
		if hot {
			limit = int((int64(x)+target-1)/target + 1)
		}
		if len(fs) > limit {
			t.Fatalf("%v: key %d (count %d, hot %v, T %d) has %d fragments; want at most %d", c, g, x, hot, target, len(fs), limit)
		}
	}
	mx := slices.Max(pl.BlockRecords)
	if bound := max(target, target-1+maxCold); mx > bound {
		t.Fatalf("%v: largest block %d records; want at most T %d - 1 + largest cold count %d", c, mx, target, maxCold)
	}
	if d >= 20*int64(c.blocks) {
		if imb := float64(mx) / (float64(n) / float64(c.blocks)); imb > 1.05 {
			t.Fatalf("%v: map imbalance %.4f with D >= 20N; want <= 1.05", c, imb)
		}
	}
	f := int64(len(pl.Frags))
	r := int64(c.reducers)
	capacity := (f + r - 1) / r
	if mr := slices.Max(pl.ReducerLoad); mr > capacity {
		t.Fatalf("%v: largest reducer %d partials; want at most ceil(%d/%d) = %d", c, mr, f, r, capacity)
	}
	if f >= 10*r {
		if imb := float64(slices.Max(pl.ReducerLoad)) / (float64(f) / float64(r)); imb > 1.10 {
			t.Fatalf("%v: reduce imbalance %.4f with F >= 10R; want <= 1.10", c, imb)
		}
	}
}

// checkPlanShape checks what every plan promises: every record assigned
// once, distinct blocks per key, loads consistent with the fragments.
func checkPlanShape(t *testing.T, c planCase, pl *Plan, s Strategy) {
	t.Helper()
	d := len(c.counts)
	if pl.Strategy != s || pl.Blocks != c.blocks || pl.Reducers != c.reducers {
		t.Fatalf("%v: plan is %v over %d blocks, %d reducers", c, pl.Strategy, pl.Blocks, pl.Reducers)
	}
	if len(pl.Index) != d+1 || pl.Index[0] != 0 || int(pl.Index[d]) != len(pl.Frags) {
		t.Fatalf("%v: Index has %d entries from %d to %d for %d fragments", c, len(pl.Index), pl.Index[0], pl.Index[len(pl.Index)-1], len(pl.Frags))
	}
	if len(pl.BlockRecords) != c.blocks || len(pl.BlockKeys) != c.blocks || len(pl.ReducerLoad) != c.reducers {
		t.Fatalf("%v: %d block records, %d block keys, %d reducer loads", c, len(pl.BlockRecords), len(pl.BlockKeys), len(pl.ReducerLoad))
	}
	recs := make([]int64, c.blocks)
	keys := make([]int64, c.blocks)
	red := make([]int64, c.reducers)
	split := 0
	used := make([]int, c.blocks) // last key+1 seen in each block
	for g, x := range c.counts {
		if pl.Index[g+1] <= pl.Index[g] {
			t.Fatalf("%v: key %d has no fragment", c, g)
		}
		var sum int64
		fs := pl.Fragments(g)
		for _, f := range fs {
			if f.Count <= 0 || f.Block < 0 || int(f.Block) >= c.blocks || f.Reducer < 0 || int(f.Reducer) >= c.reducers {
				t.Fatalf("%v: key %d has fragment %+v", c, g, f)
			}
			if used[f.Block] == g+1 {
				t.Fatalf("%v: key %d has two fragments in block %d: %+v", c, g, f.Block, fs)
			}
			used[f.Block] = g + 1
			sum += int64(f.Count)
			recs[f.Block] += int64(f.Count)
			keys[f.Block]++
			if s == Hash {
				red[f.Reducer] += int64(f.Count)
			} else {
				red[f.Reducer]++
			}
		}
		if sum != int64(x) {
			t.Fatalf("%v: key %d has %d records in its fragments; want %d", c, g, sum, x)
		}
		if len(fs) > 1 {
			split++
		}
	}
	if !slices.Equal(recs, pl.BlockRecords) {
		t.Fatalf("%v: BlockRecords = %v; fragments give %v", c, pl.BlockRecords, recs)
	}
	if !slices.Equal(keys, pl.BlockKeys) {
		t.Fatalf("%v: BlockKeys = %v; fragments give %v", c, pl.BlockKeys, keys)
	}
	if !slices.Equal(red, pl.ReducerLoad) {
		t.Fatalf("%v: ReducerLoad = %v; fragments give %v", c, pl.ReducerLoad, red)
	}
	if split != pl.SplitKeys {
		t.Fatalf("%v: SplitKeys = %d; fragments give %d", c, pl.SplitKeys, split)
	}
}

// orderByCount is the model of sortByCount.
func orderByCount(counts []int32) []int32 {
	order := make([]int32, len(counts))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(counts[b], counts[a]) })
	return order
}

func clonePlan(p *Plan) Plan {
	c := *p
	c.Index = slices.Clone(p.Index)
	c.Frags = slices.Clone(p.Frags)
	c.BlockRecords = slices.Clone(p.BlockRecords)
	c.BlockKeys = slices.Clone(p.BlockKeys)
	c.ReducerLoad = slices.Clone(p.ReducerLoad)
	return c
}

func TestPromptProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 1))
	var reused Planner // one planner for every case: reuse must not matter
	for _, c := range randomPlanCases(rng, 900) {
		pl := reused.Prompt(c.counts, nil, c.blocks, c.reducers)
		checkPromptPlan(t, c, pl)
		got := clonePlan(pl)

		var fresh Planner
		want := clonePlan(fresh.Prompt(c.counts, orderByCount(c.counts), c.blocks, c.reducers))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%v: plan with byCount differs from plan without", c)
		}
	}
}

// TestPromptBufferOrder plans from a Buffer's ByCount, whose ties are in
// another order than the planner's own.
func TestPromptBufferOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var p Planner
	b := NewBuffer[string]()
	for i := range 40 {
		keys := 1 + rng.IntN(2000)
		stream := keyStream(rng, keys*(1+rng.IntN(20)), keys, []float64{0, 0.8, 1, 1.5, 2}[i%5])
		b.Reset()
		for _, k := range stream {
			b.Add(HashString(k), k)
		}
		counts := make([]int32, b.Keys())
		for s := range counts {
			counts[s] = b.Count(int32(s))
		}
		c := planCase{name: "buffer", counts: counts, blocks: 1 + rng.IntN(64), reducers: 1 + rng.IntN(64)}
		checkPromptPlan(t, c, p.Prompt(counts, b.ByCount(), c.blocks, c.reducers))
	}
}

// TestPromptBalance covers the figures the package promises for a large
// skewed epoch: D >= 20N and F >= 10R.
func TestPromptBalance(t *testing.T) {
	var p Planner
	for _, s := range []float64{0, 0.8, 1.0, 1.5, 2.0} {
		for _, nb := range []int{1, 8, 64} {
			rng := rand.New(rand.NewPCG(uint64(nb), math.Float64bits(s)))
			c := planCase{name: fmt.Sprintf("zipf %.1f", s), counts: zipfCounts(rng, 100*nb, 100000, s), blocks: nb, reducers: nb}
			pl := p.Prompt(c.counts, nil, c.blocks, c.reducers)
			checkPromptPlan(t, c, pl)
			var mi, ri Imbalance
			mi.Add(pl.BlockRecords)
			ri.Add(pl.ReducerLoad)
			if mi.Value() > 1.05 || (len(pl.Frags) >= 10*nb && ri.Value() > 1.10) {
				t.Errorf("%v: map imbalance %.3f, reduce %.3f; want <= 1.05, 1.10", c, mi.Value(), ri.Value())
			}
		}
	}
}

func TestPromptSmallCases(t *testing.T) {
	for _, tc := range []struct {
		name             string
		counts           []int32
		blocks, reducers int
		split            int
		frags            int
	}{
		{"no keys", nil, 4, 4, 0, 0},
		{"one key one block", []int32{7}, 1, 1, 0, 1},
		// One key of 10 over 3 blocks: T = 4, so 4+4+2, in 3 blocks.
		// The key is not hot (its count is the mean), so it stays whole.
		{"one key is never hot", []int32{10}, 3, 2, 0, 1},
		// Mean 5.5: key 0 is hot and cut in T = 4 pieces of 4, 4, 2.
		{"hot key cut", []int32{10, 1}, 3, 2, 1, 4},
		// Four equal hot keys into four empty blocks: whole.
		{"hot keys spread whole", []int32{50, 50, 50, 50, 1, 1, 1, 1}, 4, 4, 0, 8},
	} {
		var p Planner
		c := planCase{name: tc.name, counts: tc.counts, blocks: tc.blocks, reducers: tc.reducers}
		pl := p.Prompt(tc.counts, nil, tc.blocks, tc.reducers)
		checkPromptPlan(t, c, pl)
		if pl.SplitKeys != tc.split || len(pl.Frags) != tc.frags {
			t.Errorf("%s: %d split keys, %d fragments; want %d, %d (%+v)", tc.name, pl.SplitKeys, len(pl.Frags), tc.split, tc.frags, pl.Frags)
		}
	}
}

// TestPromptZigZag follows the cold keys over the blocks: 0, 1, 2, then
// back from 2, skipping the blocks that reached T = 3.
func TestPromptZigZag(t *testing.T) {
	counts := []int32{1, 1, 1, 1, 1, 1, 1, 1}
	var p Planner
	pl := p.Prompt(counts, nil, 3, 1)
	var got []int32
	for g := range counts {
		got = append(got, pl.Fragments(g)[0].Block)
	}
	if want := []int32{0, 1, 2, 2, 1, 0, 0, 1}; !slices.Equal(got, want) {
		t.Errorf("blocks of the keys = %v; want %v", got, want)
	}
	// Keys 0 and 1 are hot (2 > 9/7) and fill blocks 0 and 1 to 2; the
	// cold keys then fill blocks 0 and 1 to T = 3, which leave the walk,
	// and the walk turns at block 2 for the rest.
	pl = p.Prompt([]int32{2, 2, 1, 1, 1, 1, 1}, nil, 3, 1)
	got = got[:0]
	for g := range 7 {
		got = append(got, pl.Fragments(g)[0].Block)
	}
	if want := []int32{0, 1, 0, 1, 2, 2, 2}; !slices.Equal(got, want) {
		t.Errorf("blocks of the keys = %v; want %v", got, want)
	}
}

// TestPromptPackFallback is the case where spreading hot keys whole leaves
// rooms too small: ten keys of 90 in ten blocks of T = 100 leave 10 in each
// block, and a key of 85 would need 9 fragments. The planner packs the hot
// keys end to end instead.
func TestPromptPackFallback(t *testing.T) {
	counts := []int32{90, 90, 90, 90, 90, 90, 90, 90, 90, 90, 85}
	for range 15 {
		counts = append(counts, 1)
	}
	c := planCase{name: "fallback", counts: counts, blocks: 10, reducers: 3}
	var p Planner
	p.where, p.nfrag = make([]int32, len(counts)), make([]int32, len(counts))
	if p.spreadHot(epochShape{counts: counts, order: orderByCount(counts), n: 1000, d: int64(len(counts)), target: 100, hotN: 11}, make([]int64, 10)) {
		t.Fatalf("spreading succeeded; the case no longer tests the fallback")
	}
	pl := p.Prompt(counts, nil, c.blocks, c.reducers)
	checkPromptPlan(t, c, pl)
	if got := len(pl.Fragments(10)); got > 2 {
		t.Errorf("key of 85 has %d fragments; want at most 2", got)
	}
}

func TestSortByCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var p Planner
	for i := range 200 {
		counts := make([]int32, 1+rng.IntN(500))
		limit := []int32{1, 10, 5000, 1 << 20, math.MaxInt32}[i%5]
		var mx int32
		for g := range counts {
			counts[g] = 1 + rng.Int32N(limit)
			mx = max(mx, counts[g])
		}
		if got, want := p.sortByCount(counts, mx), orderByCount(counts); !slices.Equal(got, want) {
			t.Fatalf("sortByCount(%v) = %v; want %v", counts, got, want)
		}
	}
}

func TestHashPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var p Planner
	for _, c := range randomPlanCases(rng, 100) {
		hashes := make([]uint64, len(c.counts))
		for g := range hashes {
			hashes[g] = HashUint64(uint64(g))
		}
		pl := p.Hash(c.counts, hashes, c.blocks, c.reducers)
		checkPlanShape(t, c, pl, Hash)
		if pl.SplitKeys != 0 || len(pl.Frags) != len(c.counts) {
			t.Fatalf("%v: %d split keys, %d fragments; want every key whole", c, pl.SplitKeys, len(pl.Frags))
		}
		for g, h := range hashes {
			f := pl.Fragments(g)[0]
			if int(f.Block) != HashIndex(h, c.blocks) || int(f.Reducer) != HashIndex(h, c.reducers) {
				t.Fatalf("%v: key %d goes to block %d, reducer %d; want %d, %d", c, g, f.Block, f.Reducer, HashIndex(h, c.blocks), HashIndex(h, c.reducers))
			}
		}
	}
}

func TestPlanPanicsOnBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(p *Planner)
	}{
		{"zero blocks", func(p *Planner) { p.Prompt([]int32{1}, nil, 0, 1) }},
		{"zero reducers", func(p *Planner) { p.Hash([]int32{1}, []uint64{1}, 1, 0) }},
		{"zero count", func(p *Planner) { p.Prompt([]int32{1, 0}, nil, 2, 2) }},
		{"short byCount", func(p *Planner) { p.Prompt([]int32{1, 2}, []int32{1}, 2, 2) }},
		{"repeated byCount", func(p *Planner) { p.Prompt([]int32{1, 2}, []int32{1, 1}, 2, 2) }},
		{"byCount going up", func(p *Planner) { p.Prompt([]int32{1, 2}, []int32{0, 1}, 2, 2) }},
		{"hot key after a cold one", func(p *Planner) { p.Prompt([]int32{5, 5, 1, 20}, []int32{0, 1, 3, 2}, 2, 2) }},
		{"hashes", func(p *Planner) { p.Hash([]int32{1, 2}, []uint64{1}, 2, 2) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			tc.f(&Planner{})
		}()
	}
}

func ExamplePlanner_Prompt() {
	// 90 records over 4 blocks: T = 23. Key 0 has 40, above the mean of
	// 90/7 records per key: it is hot, and cut into the 23 records that
	// fill block 0 and 17 in block 1. The cold keys go whole, zig-zag over
	// the blocks under T. Its two partials go to one reducer, the other
	// six fill both reducers to 4.
	counts := []int32{40, 10, 10, 10, 10, 5, 5}
	var p Planner
	plan := p.Prompt(counts, nil, 4, 2)
	for g := range counts {
		fmt.Println(g, plan.Fragments(g))
	}
	fmt.Println("blocks", plan.BlockRecords, "reducers", plan.ReducerLoad)
	// Output:
	// 0 [{0 23 0} {1 17 0}]
	// 1 [{1 10 1}]
	// 2 [{2 10 1}]
	// 3 [{3 10 1}]
	// 4 [{3 10 1}]
	// 5 [{2 5 0}]
	// 6 [{2 5 0}]
	// blocks [23 27 20 20] reducers [4 4]
}

// BenchmarkPrompt plans an epoch of 1M records over 100k Zipf-distributed
// keys into 64 blocks and 64 reducers.
func BenchmarkPrompt(b *testing.B) {
	for _, s := range []float64{1.0, 1.5} {
		b.Run(fmt.Sprintf("zipf=%.1f", s), func(b *testing.B) {
			counts := zipfCounts(rand.New(rand.NewPCG(1, 1)), 100000, 1000000, s)
			var p Planner
			p.Prompt(counts, nil, 64, 64)
			for b.Loop() {
				p.Prompt(counts, nil, 64, 64)
			}
			b.ReportMetric(float64(len(counts))*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
		})
	}
}

func BenchmarkHashPlan(b *testing.B) {
	counts := zipfCounts(rand.New(rand.NewPCG(1, 1)), 100000, 1000000, 1.0)
	hashes := make([]uint64, len(counts))
	for g := range hashes {
		hashes[g] = HashUint64(uint64(g))
	}
	var p Planner
	for b.Loop() {
		p.Hash(counts, hashes, 64, 64)
	}
}

// Over base loads (the records of cold keys, which go to their owners as
// they are), every key is spread: a block takes no fragment that would
// bring it above the target T = ceil((records + base)/blocks), a block
// over T from its base alone takes nothing. (The rooms the base loads
// leave are uneven, so a key may take more than ceil(count/T)+1
// fragments.)
func TestPromptOverProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	var p Planner
	for i, c := range randomPlanCases(rng, 600) {
		var n int64
		for _, x := range c.counts {
			n += int64(x)
		}
		base := make([]int64, c.blocks)
		var rest int64
		for b := range base {
			switch i % 3 {
			case 0: // even
				base[b] = n / int64(c.blocks)
			case 1: // one owner gets much
				if b == 0 {
					base[b] = 3 * n
				}
			default:
				base[b] = rng.Int64N(1 + 2*n/int64(c.blocks))
			}
			rest += base[b]
		}
		pl := p.PromptOver(c.counts, nil, base, c.blocks, c.reducers)
		got := clonePlan(pl)
		for b := range got.BlockRecords {
			got.BlockRecords[b] -= base[b]
		}
		checkPlanShape(t, c, &got, Prompt)
		target := (n + rest + int64(c.blocks) - 1) / int64(c.blocks)
		for b, l := range pl.BlockRecords {
			if l > max(target, base[b]) {
				t.Fatalf("%v, base %v: block %d holds %d; want at most T %d or its base", c, base, b, l, target)
			}
			if base[b] >= target && l != base[b] {
				t.Fatalf("%v: block %d over T %d from its base %d took fragments", c, b, target, base[b])
			}
		}
	}
}
