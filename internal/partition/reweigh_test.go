package partition

import (
	"math/rand/v2"
	"testing"
)

func TestReweigh(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var p Planner
	var s Reweigher
	for c := range 200 {
		keys := 1 + r.IntN(3000)
		counts := make([]int32, keys)
		for i := range counts {
			counts[i] = 1 + int32(r.ExpFloat64()*float64(1+c%50))
		}
		if c%3 == 0 {
			counts[0] = 100000 // a key that must be split
		}
		blocks, reducers := 1+r.IntN(64), 1+r.IntN(64)
		plan := p.Prompt(counts, nil, blocks, reducers)
		span := int32(1 + r.IntN(6))
		weight := func(g int, f Frag) int64 { return int64(min(f.Count, span)) }
		plan.Reweigh(weight, &s)
		var total, heaviest int64
		got := make([]int64, reducers)
		for g := range keys {
			var n int32
			for _, f := range plan.Fragments(g) {
				if f.Reducer < 0 || int(f.Reducer) >= reducers {
					t.Fatalf("case %d: reducer %d of %d", c, f.Reducer, reducers)
				}
				w := weight(g, f)
				got[f.Reducer] += w
				total += w
				heaviest = max(heaviest, w)
				n += f.Count
			}
			if n != counts[g] {
				t.Fatalf("case %d: key %d has %d records in fragments, want %d", c, g, n, counts[g])
			}
		}
		var mx int64
		for i, l := range got {
			if plan.ReducerLoad[i] != l {
				t.Fatalf("case %d: ReducerLoad[%d] = %d, want %d", c, i, plan.ReducerLoad[i], l)
			}
			mx = max(mx, l)
		}
		// LPT: the largest load is at most the mean plus the heaviest item.
		if mx*int64(reducers) > total+heaviest*int64(reducers) {
			t.Fatalf("case %d: largest load %d, mean %.1f, heaviest %d", c, mx, float64(total)/float64(reducers), heaviest)
		}
	}
}
