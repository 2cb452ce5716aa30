package agree

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/ds2"
	"github.com/weirstream/weir/internal/metrics"
)

// A source "src" (one instance, process 0) feeding a keyed "count" of
// up to 8 instances spread over the processes.
func config() Config {
	return Config{Tasks: []ds2.Task{
		{Name: "src", Source: true, Instances: 1, Max: 1},
		{Name: "count", Keyed: true, Upstream: []int{0}, Instances: 2, Max: 8},
	}, Keyed: []int{1}, Sources: []string{"src"}, Policy: ds2.DefaultPolicy}
}

// figures is process p's frozen figures after k intervals of one
// second in which the source read rate records a second and each of the
// process's active count instances took its share at service per record.
func figures(p, procs, active, k int, rate float64, service time.Duration) []byte {
	ps := metrics.ProcessStats{Process: p, Time: int64(k+1) * int64(time.Second)}
	read := int64(rate) * int64(k)
	if p == 0 {
		ps.Instances = append(ps.Instances, metrics.InstanceStats{Operator: "src", Process: 0, Source: true, RecordsIn: read, RecordsOut: read,
			Useful: time.Duration(k) * time.Millisecond, Lifetime: time.Duration(k) * time.Second, Running: true})
	}
	counts := make([]int64, 16)
	for i := p; i < active; i += procs {
		n := read / int64(active)
		ps.Instances = append(ps.Instances, metrics.InstanceStats{Operator: "count", Instance: i, Process: p, RecordsIn: n,
			Useful: time.Duration(n) * service, Lifetime: time.Duration(k) * time.Second, Running: true})
	}
	for g := range counts {
		counts[g] = read / int64(len(counts)) / int64(procs)
	}
	ps.Loads = []metrics.KeyGroupLoad{{Operator: "count", Counts: counts}}
	return metrics.Encode(nil, ps)
}

func round(k, procs, active int, rate float64) Round {
	r := Round{Epoch: uint64(10 * k), Active: active}
	for p := range procs {
		r.Frozen = append(r.Frozen, Frozen{Process: p, Figures: figures(p, procs, active, k, rate, time.Millisecond)})
	}
	return r
}

// Three processes' sizers fed the same rounds decide alike, with equal
// digests, and scale a count of 1 ms a record read at 3000 a second up
// from 2 instances; a sizer fed one round whose figures differ gives
// another digest for it and the next (both sized from it).
func TestSizersAgree(t *testing.T) {
	var sizers []*Sizer
	for range 4 {
		s, err := New(config(), 2)
		if err != nil {
			t.Fatal(err)
		}
		sizers = append(sizers, s)
	}
	decided := 0
	for k := 1; k <= 8; k++ {
		r := round(k, 2, 2, 3000)
		var outs []Outcome
		for i, s := range sizers {
			ri := r
			if i == 3 && k == 4 {
				// One process's view of process 1 differs.
				ri.Frozen = []Frozen{r.Frozen[0], {Process: 1, Figures: figures(1, 2, 2, k, 2900, time.Millisecond)}}
			}
			o, err := s.Step(ri)
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, o)
		}
		for i := 1; i < 3; i++ {
			if outs[i].Digest != outs[0].Digest || outs[i].Changed != outs[0].Changed || outs[i].To != outs[0].To || outs[i].Skipped != outs[0].Skipped {
				t.Fatalf("round %d: process %d decided %+v, process 0 %+v", k, i, outs[i], outs[0])
			}
		}
		if (k == 4 || k == 5) && outs[3].Digest == outs[0].Digest {
			// Rounds 4 and 5 are sized from round 4's figures.
			t.Errorf("round %d: the sizer fed other figures at round 4 has the same digest", k)
		}
		if k < 4 && outs[3].Digest != outs[0].Digest {
			t.Errorf("round %d: the digests differ before the figures did", k)
		}
		if outs[0].Changed {
			decided++
			// 3000 records of 1 ms at 80 %: 4 instances.
			if outs[0].From != 2 || outs[0].To != 4 {
				t.Errorf("round %d: %+v; want 2 -> 4", k, outs[0])
			}
		}
		t.Logf("round %d: %+v", k, outs[0])
	}
	if decided != 1 {
		t.Errorf("%d decisions; want one", decided)
	}
}

// A decision that never takes force lets the decider start afresh from
// the instances in force after pendingRounds rounds; a round whose table
// moved is not sized; ResetAt starts it afresh at the named epoch.
func TestSizerPendingAndReset(t *testing.T) {
	s, err := New(config(), 2)
	if err != nil {
		t.Fatal(err)
	}
	var changedAt int
	for k := 1; k <= 12; k++ {
		o, err := s.Step(round(k, 1, 2, 3000))
		if err != nil {
			t.Fatal(err)
		}
		if o.Changed && changedAt == 0 {
			changedAt = k
		}
		waits := changedAt > 0 && k > changedAt && k <= changedAt+pendingRounds
		if waits && (o.Skipped != "a decision has not taken force" || s.Current() != 4) {
			t.Errorf("round %d while a decision to 4 waits: %+v, current %d", k, o, s.Current())
		}
		if changedAt > 0 && k == changedAt+pendingRounds+1 && (!strings.Contains(o.Skipped, "starts afresh") || s.Current() != 2) {
			t.Errorf("round %d, the decision never in force: %+v, current %d; want the decider afresh at 2", k, o, s.Current())
		}
	}
	if changedAt == 0 {
		t.Fatal("no decision")
	}
	o, err := s.Step(Round{Epoch: 200, Frozen: round(13, 1, 2, 3000).Frozen, Active: 2, Moved: true})
	if err != nil || o.Skipped == "" || o.Changed {
		t.Errorf("a moved round: %+v %v", o, err)
	}
	if _, err := s.Step(Round{Epoch: 190, Frozen: round(12, 1, 2, 3000).Frozen, Active: 2}); err == nil {
		t.Error("a round of an earlier epoch was accepted")
	}
	// Rounds 1 (the first), 2 (warm-up), 3 and 4 (activation) change at
	// 4; a reset named for round 4's epoch puts the change off.
	for _, reset := range []bool{false, true} {
		s, _ := New(config(), 2)
		var changed []int
		for k := 1; k <= 5; k++ {
			if reset && k == 3 {
				s.ResetAt(40)
			}
			o, err := s.Step(round(k, 1, 2, 3000))
			if err != nil {
				t.Fatal(err)
			}
			if o.Changed {
				changed = append(changed, k)
			}
		}
		want := []int{4}
		if reset {
			want = nil // warm-up at 4, one ask at 5
		}
		if !slices.Equal(changed, want) {
			t.Errorf("reset %v: changed at rounds %v; want %v", reset, changed, want)
		}
	}
}

// hotRound is round k of one process whose keyed count runs active
// instances: the source read 3000 records a second, each took 1 ms, and
// in the intervals up to hotTill every record went to key group 0 (three
// instances' worth: too hot for one), after it they spread.
func hotRound(k, active, hotTill int) Round {
	const rate = 3000
	r := Round{Epoch: uint64(10 * k), Active: active}
	ps := metrics.ProcessStats{Process: 0, Time: int64(k+1) * int64(time.Second)}
	read := int64(rate) * int64(k)
	ps.Instances = append(ps.Instances, metrics.InstanceStats{Operator: "src", Source: true, RecordsIn: read, RecordsOut: read,
		Useful: time.Duration(k) * time.Millisecond, Lifetime: time.Duration(k) * time.Second, Running: true})
	for i := range active {
		n := read / int64(active)
		ps.Instances = append(ps.Instances, metrics.InstanceStats{Operator: "count", Instance: i, RecordsIn: n,
			Useful: time.Duration(n) * time.Millisecond, Lifetime: time.Duration(k) * time.Second, Running: true})
	}
	counts := make([]int64, 16)
	counts[0] = int64(rate) * int64(min(k, hotTill))
	for g := range counts {
		counts[g] += int64(rate) * int64(max(k-hotTill, 0)) / 16
	}
	ps.Loads = []metrics.KeyGroupLoad{{Operator: "count", Counts: counts}}
	r.Frozen = []Frozen{{Process: 0, Figures: metrics.Encode(nil, ps)}}
	return r
}

// A change names the key groups too hot in any interval since the last
// change, also one the interval it was decided in did not name.
func TestSizerKeepsHot(t *testing.T) {
	s, err := New(config(), 2)
	if err != nil {
		t.Fatal(err)
	}
	const hotTill = 2
	var outs []Outcome
	for k := 1; k <= 8; k++ {
		out, err := s.Step(hotRound(k, s.Current(), hotTill))
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
		if out.Changed {
			break
		}
	}
	last := outs[len(outs)-1]
	if !last.Changed {
		t.Fatalf("no change in %+v", outs)
	}
	if len(outs) < hotTill+2 || len(outs[hotTill].Hot) != 0 || len(outs[1].Hot) == 0 {
		t.Fatalf("outcomes %+v: want the first interval sized (round 2) hot, the ones after not, the change after them", outs)
	}
	if len(last.Hot) != 1 || last.Hot[0].KeyGroup != 0 || last.Hot[0].Operator != 1 {
		t.Errorf("the change names %+v; want key group 0 of count, named by an interval before it", last.Hot)
	}
	if next := s.hot; len(next) != 0 {
		t.Errorf("kept %+v after the change; want none", next)
	}
}

// Two sizers one of which saw a round's figures differ (a hot key group
// the other did not see) give equal digests again from the round a reset
// takes force at: nothing the differing round set stays apart.
func TestSizerResetForgetsHot(t *testing.T) {
	a, err := New(config(), 2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(config(), 2)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= 8; k++ {
		ra, rb := hotRound(k, a.Current(), 0), hotRound(k, b.Current(), 0)
		if k == 2 {
			rb = hotRound(k, b.Current(), 2) // b alone saw key group 0 hot
		}
		if k == 3 {
			a.ResetAt(40)
			b.ResetAt(40)
		}
		oa, err := a.Step(ra)
		if err != nil {
			t.Fatal(err)
		}
		ob, err := b.Step(rb)
		if err != nil {
			t.Fatal(err)
		}
		if same := oa.Digest == ob.Digest; same != (k < 2 || k >= 4) {
			t.Errorf("round %d: digests equal %v; want them apart from round 2 to the reset at round 4 only\n%+v\n%+v", k, same, oa, ob)
		}
	}
}

// A round frozen moments after the one before is passed over, and the
// next is sized from the one before it: its sizing is the one a sizer
// that never saw the short round gives.
func TestSizerPassesOverShortIntervals(t *testing.T) {
	cfg := config()
	cfg.MinInterval = 500 * time.Millisecond
	a, err := New(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Round 2's figures, frozen 1 ms after round 1's, read nothing more.
	early := Round{Epoch: 15, Active: 2, Frozen: []Frozen{{Process: 0, Figures: func() []byte {
		ps, _ := metrics.Decode(figures(0, 1, 2, 1, 3000, time.Millisecond))
		ps.Time += int64(time.Millisecond)
		return metrics.Encode(nil, ps)
	}()}}}
	var sa, sb []Outcome
	for k := 1; k <= 6; k++ {
		if k == 2 {
			out, err := a.Step(early)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.Skipped, "less than 500ms") {
				t.Errorf("the short round: %+v; want it passed over", out)
			}
		}
		oa, err := a.Step(round(k, 1, a.Current(), 3000))
		if err != nil {
			t.Fatal(err)
		}
		ob, err := b.Step(round(k, 1, b.Current(), 3000))
		if err != nil {
			t.Fatal(err)
		}
		sa, sb = append(sa, oa), append(sb, ob)
	}
	for i := range sa {
		if sa[i].Changed != sb[i].Changed || sa[i].To != sb[i].To || sa[i].Skipped != sb[i].Skipped {
			t.Errorf("round %d: %+v after a short round; %+v without", i+1, sa[i], sb[i])
		}
	}
	if !slices.ContainsFunc(sa, func(o Outcome) bool { return o.Changed }) {
		t.Errorf("no change in %+v", sa)
	}
}
