package gen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// zipfProbs returns the exact probabilities of the ranks.
func zipfProbs(keys int, s float64) []float64 {
	p := make([]float64, keys)
	var sum float64
	for k := keys - 1; k >= 0; k-- {
		p[k] = math.Pow(float64(k+1), -s)
		sum += p[k]
	}
	for k := range p {
		p[k] /= sum
	}
	return p
}

// checkZipfCounts compares observed rank counts with the Zipf law: a
// chi-square statistic over all ranks, and each of the top ranks within six
// standard deviations.
func checkZipfCounts(t *testing.T, counts []int, s float64) {
	t.Helper()
	var n float64
	for _, c := range counts {
		n += float64(c)
	}
	p := zipfProbs(len(counts), s)
	var chi2 float64
	for k, c := range counts {
		want := n * p[k]
		chi2 += (float64(c) - want) * (float64(c) - want) / want
		if k < 10 {
			if tol := 6 * math.Sqrt(want*(1-p[k])); math.Abs(float64(c)-want) > tol {
				t.Errorf("s=%v, key %d: got %d; want %.0f ± %.0f", s, k, c, want, tol)
			}
		}
	}
	// The 1-in-a-million critical value of chi-square, by Wilson–Hilferty.
	df := float64(len(counts) - 1)
	crit := df * math.Pow(1-2/(9*df)+4.75*math.Sqrt(2/(9*df)), 3)
	if chi2 > crit {
		t.Errorf("s=%v: chi-square = %.1f with %v degrees of freedom; want below %.1f", s, chi2, df, crit)
	}
}

func TestZipfSamplerFrequencies(t *testing.T) {
	const keys, n = 50, 2_000_000
	for _, s := range []float64{0.5, 0.8, 1.0, 1.5, 2.0} {
		t.Run(fmt.Sprint(s), func(t *testing.T) {
			z := NewZipfSampler(keys, s)
			r := rand.New(rand.NewPCG(1, 2))
			counts := make([]int, keys)
			for range n {
				counts[z.Sample(r)]++
			}
			checkZipfCounts(t, counts, s)
		})
	}
}

func TestZipfSamplerEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	one := NewZipfSampler(1, 0.7)
	for range 100 {
		if k := one.Sample(r); k != 0 {
			t.Fatalf("one key: got %d; want 0", k)
		}
	}
	big := NewZipfSampler(1_000_000, 1.1)
	if got, want := big.Keys(), 1_000_000; got != want {
		t.Errorf("Keys() = %d; want %d", got, want)
	}
	for range 1000 {
		if k := big.Sample(r); k >= 1_000_000 {
			t.Fatalf("got key %d; want < 1000000", k)
		}
	}
	for _, bad := range []struct {
		keys int
		s    float64
	}{{0, 1}, {-1, 1}, {10, 0}, {10, -1}, {10, math.NaN()}, {10, math.Inf(1)}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewZipfSampler(%d, %v) did not panic", bad.keys, bad.s)
				}
			}()
			NewZipfSampler(bad.keys, bad.s)
		}()
	}
}

func TestZipfSource(t *testing.T) {
	const keys, events = 100, 400_000
	src := Zipf{Keys: keys, S: 1.2, Events: events, Seed: 5, StartTime: 1}
	var all []ZipfRecord
	for i := range 3 {
		all = append(all, readAll(t, src, i, 3, 1024)...)
	}
	counts := make([]int, keys)
	seen := make([]bool, events)
	for _, r := range all {
		if r.Key >= keys {
			t.Fatalf("key %d; want < %d", r.Key, keys)
		}
		counts[r.Key]++
		if r.Value < 0 || r.Value >= events || seen[r.Value] {
			t.Fatalf("value %d out of range or seen twice", r.Value)
		}
		seen[r.Value] = true
	}
	if len(all) != events {
		t.Errorf("read %d records; want %d", len(all), events)
	}
	checkZipfCounts(t, counts, 1.2)
}

func TestZipfDeterministicAndSplit(t *testing.T) {
	src := Zipf{Keys: 1000, S: 0.9, Seed: 11, Events: 5000, StartTime: 1}
	a, b := readAll(t, src, 2, 4, 1024), readAll(t, src, 2, 4, 1024)
	if !slices.Equal(a, b) {
		t.Errorf("two reads of the same seed differ")
	}
	for _, tc := range splitCases {
		t.Run(fmt.Sprintf("%d/%d", tc.total, tc.par), func(t *testing.T) {
			checkSplit(t, Zipf{Keys: 10, S: 1, Seed: 1, Events: int64(tc.total), StartTime: 1}, tc.total, tc.par)
		})
	}
}

func TestZipfSamplerShared(t *testing.T) {
	a := sharedZipfSampler(77, 1.3)
	if b := sharedZipfSampler(77, 1.3); a != b {
		t.Errorf("two live samplers for the same table")
	}
	if c := sharedZipfSampler(77, 1.4); a == c {
		t.Errorf("the same sampler for different exponents")
	}
}
