package exchange

import (
	"fmt"
	"testing"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/window"
)

// countSink is a receiver of a combining exchange: it adds up the partials
// and raw records of a count per key and window, and checks that each
// reaches the owner of its key group.
type countSink struct {
	t        *testing.T
	tab      *partition.Table
	self     int
	size     int64 // of the tumbling windows
	counts   map[string]int64
	partials *int
	raw      *int
}

func (s *countSink) Send(b any) error {
	switch b := b.(type) {
	case *Pbatch[string, int64]:
		for _, p := range b.Recs {
			s.check(p.H)
			s.counts[fmt.Sprint(p.K, "@", p.Start)] += p.Acc
			*s.partials++
		}
		b.Release()
	case *dataflow.Kbatch[string, string]:
		for _, r := range b.Recs {
			s.check(r.H)
			s.counts[fmt.Sprint(r.K, "@", r.Ts-r.Ts%s.size)]++
			*s.raw++
		}
		b.Release()
	default:
		s.t.Fatalf("unexpected batch %T", b)
	}
	return nil
}

func (s *countSink) check(h uint64) {
	if o := s.tab.Owner(partition.KeyGroupOf(h, s.tab.Groups())); o != s.self {
		s.t.Fatalf("receiver %d got a key of group owned by %d", s.self, o)
	}
}

func (*countSink) Mark(progress.Marker) error { return nil }

// combineRig is one combining exchange over three receivers.
type combineRig struct {
	c                  *combineEx[string, string, int64]
	counts             map[string]int64
	partials, raw, ts  int
	want               map[string]int64
	recordsThisEpoch   int
	partialsAtEpochEnd []int
}

const rigWindow = 1000

func newCombineRig(t *testing.T, adapt bool) *combineRig {
	const groups, receivers = 32, 3
	owner := make([]int, groups)
	for kg := range owner {
		owner[kg] = kg % receivers
	}
	tab, err := partition.NewTable(0, receivers, owner)
	if err != nil {
		t.Fatal(err)
	}
	r := &combineRig{counts: map[string]int64{}, want: map[string]int64{}}
	outlets := make([]runtime.Outlet, receivers)
	for i := range outlets {
		outlets[i] = runtime.RemoteOutlet(&countSink{t: t, tab: tab, self: i, size: rigWindow, counts: r.counts, partials: &r.partials, raw: &r.raw})
	}
	spec := window.Spec{Kind: window.Tumbling, Size: rigWindow}
	r.c = NewCombineEx(func(s string) string { return s }, tab, outlets, 64, spec, nil,
		func(a int64, _ string) int64 { return a + 1 }, false)
	r.c.Adapt = adapt
	return r
}

// epoch pushes keys, one record per time unit, and ends the epoch.
func (r *combineRig) epoch(t *testing.T, e int, keys []string) {
	b := &dataflow.Batch[string]{}
	for _, k := range keys {
		b.V = append(b.V, k)
		b.Ts = append(b.Ts, int64(r.ts))
		r.want[fmt.Sprint(k, "@", r.ts-r.ts%rigWindow)]++
		r.ts++
	}
	before := r.partials
	if err := r.c.Push(b); err != nil {
		t.Fatal(err)
	}
	if err := r.c.Mark(progress.Marker{Epoch: progress.Epoch(e), Watermark: progress.NoWatermark}); err != nil {
		t.Fatal(err)
	}
	r.partialsAtEpochEnd = append(r.partialsAtEpochEnd, r.partials-before)
}

func (r *combineRig) check(t *testing.T) {
	t.Helper()
	if len(r.counts) != len(r.want) {
		t.Fatalf("%d key windows; want %d", len(r.counts), len(r.want))
	}
	for k, n := range r.want {
		if r.counts[k] != n {
			t.Fatalf("%s counted %d; want %d", k, r.counts[k], n)
		}
	}
}

// skewed returns n keys: one in two is "hot", one in four one of 8 warm
// keys, the rest each new.
func skewed(n, seed int) []string {
	out := make([]string, n)
	for i := range out {
		switch {
		case i%2 == 0:
			out[i] = "hot"
		case i%4 == 1:
			out[i] = fmt.Sprint("warm", i%32)
		default:
			out[i] = fmt.Sprint("cold", seed, "-", i)
		}
	}
	return out
}

// distinct returns n keys, each new.
func distinct(n, seed int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint("d", seed, "-", i)
	}
	return out
}

// TestCombinerCountsThroughEvictions: more distinct keys than the
// combiner has slots, so key windows are evicted and come back; every
// record is counted once at its owner, and the frequent keys are combined.
func TestCombinerCountsThroughEvictions(t *testing.T) {
	for _, adapt := range []bool{false, true} {
		t.Run(fmt.Sprint("adapt=", adapt), func(t *testing.T) {
			r := newCombineRig(t, adapt)
			for e := range 4 {
				r.epoch(t, e, skewed(40_000, e))
			}
			r.check(t)
			if r.raw != 0 {
				t.Errorf("%d raw records; combining pays here, every record should be combined", r.raw)
			}
			// 40,000 records over 40 windows: 10,000 cold keys, each a
			// partial, and the hot and warm keys a partial per window, plus
			// the few evicted by a cold key that took their slot.
			for e, p := range r.partialsAtEpochEnd {
				if p > 10_000+9*40+200 {
					t.Errorf("epoch %d: %d partials for 40,000 records; the frequent keys were not combined", e, p)
				}
			}
		})
	}
}

// TestCombinerAdapts: under Adapt, an epoch of distinct keys turns
// combining off, the following epochs go raw, and combining comes back;
// without Adapt it never turns off. The counts are exact either way.
func TestCombinerAdapts(t *testing.T) {
	for _, adapt := range []bool{false, true} {
		t.Run(fmt.Sprint("adapt=", adapt), func(t *testing.T) {
			r := newCombineRig(t, adapt)
			r.epoch(t, 0, distinct(20_000, 0))
			if want := 0; adapt {
				want = offEpochs
				if r.c.Off != want {
					t.Fatalf("after an epoch of distinct keys Off = %d; want %d", r.c.Off, want)
				}
			} else if r.c.Off != want {
				t.Fatalf("without Adapt Off = %d; want %d", r.c.Off, want)
			}
			rawBefore := r.raw
			for e := 1; e <= offEpochs; e++ {
				r.epoch(t, e, skewed(1000, e))
			}
			if adapt && r.raw-rawBefore != offEpochs*1000 {
				t.Errorf("%d raw records while combining was off; want %d", r.raw-rawBefore, offEpochs*1000)
			}
			if !adapt && r.raw != 0 {
				t.Errorf("%d raw records without Adapt; want 0", r.raw)
			}
			rawBefore = r.raw
			r.epoch(t, offEpochs+1, skewed(1000, offEpochs+1))
			if r.raw != rawBefore || r.c.Off != 0 {
				t.Errorf("combining did not come back: %d raw records, Off = %d", r.raw-rawBefore, r.c.Off)
			}
			r.check(t)
		})
	}
}
