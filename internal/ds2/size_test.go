package ds2

import (
	"reflect"
	"strings"
	"testing"
)

// DS2's worked example: source 100/s -> Op1 (1 instance, λp 50, λo 400)
// -> Op2 (λp 100 per instance): Op1 needs 2 instances, its projected
// output is 800/s, and Op2 needs 8.
func TestSizeExample(t *testing.T) {
	s, err := Size([]Operator{
		{Name: "src", Source: true, Target: 100, Instances: 1},
		{Name: "op1", Upstream: []int{0}, Instances: 1, Processing: 50, Output: 400},
		{Name: "op2", Upstream: []int{1}, Instances: 1, Processing: 100, Output: 100},
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Parallelism, []int{1, 2, 8}) || !reflect.DeepEqual(s.Input, []float64{100, 100, 800}) {
		t.Fatalf("parallelism %v, inputs %v; want [1 2 8], [100 100 800]", s.Parallelism, s.Input)
	}
}

// An operator's rate is its instances' sum: two instances of 100/s each
// serve 100/s apiece; two upstream operators' outputs add; a measured
// source is sized from its own rate; a lower utilization plans for more
// instances.
func TestSizeRatesAndJoins(t *testing.T) {
	ops := []Operator{
		{Source: true, Target: 250, Instances: 1, Processing: 100, Output: 100},
		{Source: true, Target: 50, Instances: 1},
		{Upstream: []int{0, 1}, Instances: 2, Processing: 200, Output: 100}, // selectivity 1/2
		{Upstream: []int{2}, Instances: 1, Processing: 40, Output: 40},
	}
	for _, c := range []struct {
		util float64
		want []int
	}{{1, []int{3, 1, 3, 4}}, {0.5, []int{5, 1, 6, 8}}} {
		s, err := Size(ops, c.util)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(s.Parallelism, c.want) {
			t.Errorf("utilization %v: parallelism %v, want %v", c.util, s.Parallelism, c.want)
		}
	}
}

// Averaged rates say two instances serve three equal key groups at 180/s
// with 100/s each; a key group cannot be split, so it takes three. One key
// group of half the input at 300/s exceeds any instance: the sizing says
// which. An operator that needs more than its Max is capped and named.
func TestSizeSkew(t *testing.T) {
	keyed := func(counts []float64, most int) Operator {
		return Operator{Upstream: []int{0}, Instances: 1, Processing: 100, Output: 100, KeyGroups: counts, Max: most}
	}
	src := func(target float64) Operator { return Operator{Source: true, Target: target, Instances: 1} }
	s, err := Size([]Operator{src(180), keyed([]float64{6, 6, 0, 6}, 0)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Parallelism[1] != 3 || len(s.Hot) != 0 {
		t.Errorf("three equal key groups at 180/s, 100/s an instance: %v, hot %v; want 3 and none", s.Parallelism, s.Hot)
	}
	s, _ = Size([]Operator{src(180), keyed([]float64{50, 10, 10, 10, 10, 5, 3, 2}, 0)}, 1)
	if s.Parallelism[1] != 2 {
		t.Errorf("key groups that pack into 2: %v", s.Parallelism)
	}
	s, _ = Size([]Operator{src(300), keyed([]float64{50, 10, 10, 10, 10, 5, 3, 2}, 0)}, 1)
	// The hot key group alone, the rest (150/s in groups of 30/s and
	// less) on two.
	if len(s.Hot) != 1 || s.Hot[0] != (Hot{Operator: 1, KeyGroup: 0, Need: 150, Capacity: 100}) || s.Parallelism[1] != 3 {
		t.Errorf("key group 0 takes half of 300/s against 100/s an instance: hot %+v, parallelism %v", s.Hot, s.Parallelism)
	}
	s, _ = Size([]Operator{src(1000), keyed(nil, 4)}, 1)
	if s.Parallelism[1] != 4 || !reflect.DeepEqual(s.Capped, []int{1}) {
		t.Errorf("10 instances needed, at most 4: %v, capped %v", s.Parallelism, s.Capped)
	}
}

func TestSizeRefuses(t *testing.T) {
	src := Operator{Source: true, Target: 1, Instances: 1}
	for _, c := range []struct {
		ops  []Operator
		util float64
		want string
	}{
		{nil, 1, "no operators"},
		{[]Operator{src}, 0, "utilization"},
		{[]Operator{src}, 1.5, "utilization"},
		{[]Operator{{Source: true, Instances: 0}}, 1, "instances"},
		{[]Operator{src, {Name: "x", Instances: 1, Upstream: []int{1}}}, 1, "x: upstream 1"},
		{[]Operator{src, {Instances: 1}}, 1, "needs upstream"},
		{[]Operator{src, {Instances: 1, Upstream: []int{0}, Processing: -1}}, 1, "finite"},
		{[]Operator{{Source: true, Instances: 1, Upstream: []int{0}}}, 1, "a source has no upstream"},
		{[]Operator{src, {Instances: 1, Upstream: []int{0}, KeyGroups: []float64{1, -2}}}, 1, "key group 1"},
		{[]Operator{src, {Instances: 1, Upstream: []int{0}, Max: -1}}, 1, "Max -1"},
		{[]Operator{{Source: true, Target: 1e25, Instances: 1}, {Name: "x", Instances: 1, Upstream: []int{0}, Processing: 1, Output: 1}}, 1, "x: a target input of 1e+25"},
	} {
		if _, err := Size(c.ops, c.util); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v at %v: %v; want an error with %q", c.ops, c.util, err, c.want)
		}
	}
}

// LPT onto the least loaded instance.
func TestMakespan(t *testing.T) {
	// 7 and 6 apart, 5 onto 6, 4 onto 7, 3 onto 11: 14 (the best is 13,
	// 7+6 against 5+4+3, and LPT is within 4/3 of it).
	if m := Makespan([]float64{7, 6, 5, 4, 3}, 2); m != 14 {
		t.Errorf("makespan %v, want 14", m)
	}
	if m := Makespan([]float64{5, 5, 5}, 3); m != 5 {
		t.Errorf("makespan %v, want 5", m)
	}
}
