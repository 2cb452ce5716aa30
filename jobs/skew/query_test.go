package skew

import (
	"fmt"
	"testing"
)

func TestReference(t *testing.T) {
	recs := []Record{
		{Key: 7, EventTime: 1_999}, {Key: 7, EventTime: 1_000}, {Key: 3, EventTime: 2_000},
		{Key: 7, EventTime: 2_500}, {Key: 3, EventTime: -1}, {Key: 3, EventTime: 2_999},
	}
	got := fmt.Sprint(Reference(recs))
	want := "[{3 -1000 0 1} {7 1000 2000 2} {3 2000 3000 2} {7 2000 3000 1}]"
	if got != want {
		t.Errorf("Reference = %s; want %s", got, want)
	}
}

func TestGenerate(t *testing.T) {
	for _, c := range []Config{
		{Dist: "zipf", S: 1.5, Keys: 1_000, Events: 50_000, Seed: 4},
		{Dist: "uniform", Keys: 1_000, Events: 50_000, Seed: 4},
	} {
		a, err := Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Generate(c)
		if len(a) != c.Events || fmt.Sprint(a[:100]) != fmt.Sprint(b[:100]) {
			t.Fatalf("Generate(%+v) is not deterministic or has %d records", c, len(a))
		}
		counts := make([]int, c.Keys)
		for i, r := range a {
			if r.Value != int64(i) || r.Key >= uint64(c.Keys) {
				t.Fatalf("Generate(%+v)[%d] = %+v", c, i, r)
			}
			if i > 0 && r.EventTime < a[i-1].EventTime {
				t.Fatalf("Generate(%+v): event time goes back at %d", c, i)
			}
			counts[r.Key]++
		}
		// Zipf's rank 0 takes about 1/H(1000, 1.5) ≈ 40%; uniform about
		// 0.1% of the records.
		share := float64(counts[0]) / float64(c.Events)
		if c.Dist == "zipf" && (share < 0.35 || share > 0.45) || c.Dist == "uniform" && share > 0.003 {
			t.Errorf("Generate(%+v): key 0 has %.4f of the records", c, share)
		}
	}
	if _, err := Generate(Config{Dist: "pareto", Events: 1}); err == nil {
		t.Error("Generate with an unknown distribution succeeded")
	}
}
