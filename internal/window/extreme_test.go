package window

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// The tests in this file draw event times, sizes and bounds near the ends
// of int64 and compare the package with a model in math/big arithmetic,
// where nothing overflows.

var (
	bigMin = big.NewInt(math.MinInt64)
	bigMax = big.NewInt(math.MaxInt64)
)

func bi(x int64) *big.Int { return big.NewInt(x) }

func add(a, b *big.Int) *big.Int { return new(big.Int).Add(a, b) }
func sub(a, b *big.Int) *big.Int { return new(big.Int).Sub(a, b) }

// floorB is floor(a/d) for d > 0 (big.Int's Div is Euclidean).
func floorB(a, d *big.Int) *big.Int { return new(big.Int).Div(a, d) }

// ceilB is ceil(a/d) for d > 0.
func ceilB(a, d *big.Int) *big.Int { return new(big.Int).Neg(floorB(new(big.Int).Neg(a), d)) }

// clamp maps an exact value to int64, an out-of-range one to the infinity
// on its side.
func clamp(x *big.Int) int64 {
	switch {
	case x.Cmp(bigMax) > 0:
		return math.MaxInt64
	case x.Cmp(bigMin) < 0:
		return math.MinInt64
	}
	return x.Int64()
}

func fits(x *big.Int) bool { return x.Cmp(bigMin) >= 0 && x.Cmp(bigMax) <= 0 }

// modelWindows is every window [start, end) of a tumbling or sliding spec
// that contains ts, latest start first, in exact arithmetic.
func modelWindows(s Spec, ts int64) [][2]*big.Int {
	size, slide := bi(s.Size), bi(s.Slide)
	if s.Kind == Tumbling {
		slide = size
	}
	t := bi(ts)
	kLo := ceilB(add(sub(t, size), bi(1)), slide)
	var out [][2]*big.Int
	for k := floorB(t, slide); k.Cmp(kLo) >= 0; k = sub(k, bi(1)) {
		start := new(big.Int).Mul(k, slide)
		out = append(out, [2]*big.Int{start, add(start, size)})
	}
	return out
}

// modelValid says whether every window of ts has exact int64 bounds and ts
// is not one of the infinities.
func modelValid(s Spec, ts int64) bool {
	if ts == math.MinInt64 || ts == math.MaxInt64 {
		return false
	}
	switch s.Kind {
	case Session:
		return fits(add(bi(ts), bi(s.Gap)))
	case Global:
		return true
	}
	for _, w := range modelWindows(s, ts) {
		if !fits(w[0]) || !fits(w[1]) {
			return false
		}
	}
	return true
}

// extremeTime draws a time, mostly near math.MinInt64, math.MaxInt64, 0 or
// ±2^53.
func extremeTime(r *rand.Rand) int64 {
	centers := []int64{math.MinInt64, math.MaxInt64, 0, 1 << 53, -1 << 53}
	if r.IntN(8) == 0 {
		return int64(r.Uint64())
	}
	c := centers[r.IntN(len(centers))]
	var off int64
	switch r.IntN(4) {
	case 0:
		off = r.Int64N(4)
	case 1:
		off = r.Int64N(200)
	case 2:
		off = r.Int64N(1 << 24)
	default:
		off = r.Int64N(1 << 62)
	}
	if r.IntN(2) == 0 {
		return SubSat(c, off)
	}
	return AddSat(c, off)
}

// extremeSize draws a positive length from 1 ms to math.MaxInt64.
func extremeSize(r *rand.Rand) int64 {
	switch r.IntN(6) {
	case 0:
		return 1 + r.Int64N(10)
	case 1:
		return 10_000
	case 2:
		return 1 << r.IntN(63)
	case 3:
		return 1<<62 + r.Int64N(1<<62)
	case 4:
		return math.MaxInt64 - r.Int64N(3)
	}
	return 1 + r.Int64N(1<<r.IntN(63))
}

// extremeSpec draws a tumbling, sliding or session spec (sliding ones with
// at most 64 windows per time) with or without lateness.
func extremeSpec(r *rand.Rand) Spec {
	var s Spec
	switch r.IntN(4) {
	case 0, 1:
		s = Spec{Kind: Tumbling, Size: extremeSize(r)}
	case 2:
		size := extremeSize(r)
		slide := max(1, size/(1+r.Int64N(64)))
		if r.IntN(3) == 0 {
			slide = size - r.Int64N(max(1, size/2)) // not a divisor
		}
		s = Spec{Kind: Sliding, Size: size, Slide: max(slide, (size-1)/64+1)}
	default:
		s = Spec{Kind: Session, Gap: extremeSize(r)}
	}
	if r.IntN(2) == 0 {
		s.Lateness = extremeSize(r) - 1
	}
	if err := s.Validate(); err != nil {
		panic(err)
	}
	return s
}

func TestSaturatingArithmetic(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for range 200_000 {
		a, b := extremeTime(r), extremeTime(r)
		if got, want := AddSat(a, b), clamp(add(bi(a), bi(b))); got != want {
			t.Fatalf("AddSat(%d, %d) = %d; want %d", a, b, got, want)
		}
		if got, want := SubSat(a, b), clamp(sub(bi(a), bi(b))); got != want {
			t.Fatalf("SubSat(%d, %d) = %d; want %d", a, b, got, want)
		}
	}
}

// TestRangeAgainstModel checks ValidTime against the model at random times
// and at both ends of Range, where validity must change.
func TestRangeAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for trial := 0; trial < 20_000; trial++ {
		s := extremeSpec(r)
		if r.IntN(10) == 0 {
			s = Spec{Kind: Global}
		}
		lo, hi := s.Range()
		if lo > hi || lo > 0 || hi < 0 {
			t.Fatalf("%+v: Range = [%d, %d]; want a range around 0", s, lo, hi)
		}
		probes := []int64{lo, hi, extremeTime(r), extremeTime(r), extremeTime(r)}
		if lo > math.MinInt64 {
			probes = append(probes, lo-1)
		}
		if hi < math.MaxInt64 {
			probes = append(probes, hi+1)
		}
		for _, ts := range probes {
			if got, want := s.ValidTime(ts), modelValid(s, ts); got != want {
				t.Fatalf("%+v (Range [%d, %d]): ValidTime(%d) = %v; model says %v", s, lo, hi, ts, got, want)
			}
		}
	}
}

// TestAssignAgainstModel checks that Assign gives exactly the model's
// windows for a valid time, each with start <= ts < end, and for any other
// time only windows that contain it and have exact bounds: never a wrapped
// one. The tumbling cache must agree.
func TestAssignAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for trial := 0; trial < 3_000; trial++ {
		s := extremeSpec(r)
		if s.Kind == Session {
			continue
		}
		var c TumblingCache
		ts := extremeTime(r)
		for range 40 {
			switch r.IntN(3) {
			case 0:
				ts = extremeTime(r)
			case 1:
				ts = AddSat(ts, r.Int64N(5)-2) // near the last: the cache hits
			}
			var want [][2]int64
			for _, w := range modelWindows(s, ts) {
				if fits(w[0]) && fits(w[1]) {
					want = append(want, [2]int64{w[0].Int64(), w[1].Int64()})
				}
			}
			var got [][2]int64
			s.Assign(ts, func(start, end int64) {
				if !(start <= ts && ts < end) {
					t.Fatalf("%+v: Assign(%d) gave [%d, %d), which does not contain it", s, ts, start, end)
				}
				got = append(got, [2]int64{start, end})
			})
			if !slices.Equal(got, want) {
				t.Fatalf("%+v: Assign(%d) = %v; want %v", s, ts, got, want)
			}
			if valid := modelValid(s, ts); valid && len(got) != len(modelWindows(s, ts)) {
				t.Fatalf("%+v: Assign(%d) lost windows of a valid time", s, ts)
			}
			if s.Kind != Tumbling {
				continue
			}
			start, end, ok := c.Window(ts, s.Size)
			if ok != (len(want) == 1) {
				t.Fatalf("%+v: TumblingCache.Window(%d) ok = %v; the model has %d exact windows", s, ts, ok, len(want))
			}
			if ok && (len(want) != 1 || want[0] != [2]int64{start, end}) {
				t.Fatalf("%+v: TumblingCache.Window(%d) = [%d, %d); want %v", s, ts, start, end, want)
			}
		}
	}
}

// modelCleanup is end-1+lateness, exact.
func modelCleanup(end, lateness int64) *big.Int { return add(sub(bi(end), bi(1)), bi(lateness)) }

// modelLate: a window is past cleanup at wm. math.MaxInt64 is +inf, at
// which everything is; math.MinInt64 is -inf, at which nothing is.
func modelLate(end, lateness, wm int64) bool {
	if wm == math.MaxInt64 {
		return true
	}
	return modelCleanup(end, lateness).Cmp(bi(wm)) <= 0
}

// extremeWatermark draws a watermark: a time, or one of the infinities.
func extremeWatermark(r *rand.Rand) int64 {
	switch r.IntN(10) {
	case 0:
		return math.MinInt64
	case 1:
		return math.MaxInt64
	}
	return extremeTime(r)
}

// TestLateAndDueAgainstModel checks, for the windows of valid times, that
// fire and cleanup times are at least end-1, that the cleanup time is the
// model's clamped at +inf, and that a window is late iff the model says so.
func TestLateAndDueAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for trial := 0; trial < 20_000; trial++ {
		s := extremeSpec(r)
		ts := extremeTime(r)
		if !s.ValidTime(ts) {
			continue
		}
		var wins [][2]int64
		if s.Kind == Session {
			wins = [][2]int64{{ts, ts + s.Gap}}
		} else {
			s.Assign(ts, func(start, end int64) { wins = append(wins, [2]int64{start, end}) })
		}
		for _, w := range wins {
			end := w[1]
			if got := fireTime(end); got != end-1 {
				t.Fatalf("fireTime(%d) = %d", end, got)
			}
			cl := cleanup(end, s.Lateness)
			if want := clamp(modelCleanup(end, s.Lateness)); cl != want || cl < end-1 {
				t.Fatalf("cleanup(%d, %d) = %d; want %d, at least end-1", end, s.Lateness, cl, want)
			}
			for _, fired := range []bool{false, true} {
				win := &Win[int]{Start: w[0], End: end, Fired: fired}
				if d := Due(win, s.Lateness); d < end-1 {
					t.Fatalf("Due(%+v, %d) = %d < end-1", *win, s.Lateness, d)
				}
			}
			for range 8 {
				wm := extremeWatermark(r)
				if got, want := s.Late(end, wm), modelLate(end, s.Lateness, wm); got != want {
					t.Fatalf("%+v: Late(%d, %d) = %v; model says %v", s, end, wm, got, want)
				}
			}
		}
	}
}

// TestWatermarkAgainstModel checks Watermark over growing maxima: it is
// the model's maxTs-bound-1 clamped at -inf, it never decreases as the
// maximum grows, and it never reaches +inf.
func TestWatermarkAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for trial := 0; trial < 2_000; trial++ {
		bound := extremeSize(r) - 1
		if r.IntN(4) == 0 {
			bound = r.Int64N(1 << 43) // what a time.Duration in ms can be
		}
		var ts []int64
		for range 50 {
			if x := extremeTime(r); x != math.MinInt64 && x != math.MaxInt64 {
				ts = append(ts, x)
			}
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		prev := int64(math.MinInt64)
		for _, x := range ts {
			wm := Watermark(x, bound)
			exact := sub(sub(bi(x), bi(bound)), bi(1))
			want := int64(math.MinInt64)
			if exact.Cmp(bigMin) >= 0 {
				want = exact.Int64()
			}
			if wm != want {
				t.Fatalf("Watermark(%d, %d) = %d; want %d", x, bound, wm, want)
			}
			if wm < prev || wm >= math.MaxInt64-1 {
				t.Fatalf("Watermark(%d, %d) = %d after %d: decreased or reached +inf", x, bound, wm, prev)
			}
			prev = wm
		}
	}
}

// TestSessionsNearExtremes adds valid times near one end of int64 to a
// session Set and compares with the sessions of the model, in exact
// arithmetic: sorted times, cut where the next is at or past the end.
func TestSessionsNearExtremes(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for trial := 0; trial < 2_000; trial++ {
		gap := extremeSize(r)
		if r.IntN(2) == 0 {
			gap = 1 + r.Int64N(1000)
		}
		s := Spec{Kind: Session, Gap: gap}
		base := extremeTime(r)
		var set Set[int]
		var ts []int64
		for range 1 + r.IntN(20) {
			span := min(gap, 1<<60)
			x := AddSat(base, r.Int64N(2*span)-span/2)
			if !s.ValidTime(x) {
				continue
			}
			ts = append(ts, x)
			w := set.AddSession(x, gap, 0, math.MinInt64, nil, func(a, b int) int { return a + b })
			if w == nil || !(w.Start <= x && x < w.End) {
				t.Fatalf("gap %d: AddSession(%d) = %+v", gap, x, w)
			}
			w.Acc++
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		type sess struct {
			start, end int64
			n          int
		}
		var want []sess
		var end *big.Int
		for _, x := range ts {
			e := add(bi(x), bi(gap))
			if len(want) > 0 && bi(x).Cmp(end) < 0 {
				if e.Cmp(end) > 0 {
					end = e
				}
				want[len(want)-1].end = end.Int64()
				want[len(want)-1].n++
				continue
			}
			end = e
			want = append(want, sess{x, e.Int64(), 1})
		}
		var got []sess
		for _, w := range set.W {
			got = append(got, sess{w.Start, w.End, w.Acc})
		}
		sort.Slice(got, func(i, j int) bool { return got[i].start < got[j].start })
		if !slices.Equal(got, want) {
			t.Fatalf("gap %d times %v:\n got %v\nwant %v", gap, ts, got, want)
		}
	}
}

// TestFireNearExtremes fills a Set with the windows of valid times and
// fires it at growing watermarks: each window is emitted at the first
// watermark at or past end-1 and dropped at the first at or past its
// cleanup, as the model says, and the next watermark Fire asks for is the
// model's earliest pending time.
func TestFireNearExtremes(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for trial := 0; trial < 3_000; trial++ {
		s := extremeSpec(r)
		if s.Kind == Session {
			continue
		}
		var set Set[int]
		for range 1 + r.IntN(6) {
			ts := extremeTime(r)
			if s.ValidTime(ts) {
				s.Assign(ts, func(start, end int64) { set.Get(start, end, nil).Acc++ })
			}
		}
		model := map[[2]int64]*fireState{}
		for _, w := range set.W {
			model[[2]int64{w.Start, w.End}] = &fireState{}
		}
		var wms []int64
		for range 6 {
			wms = append(wms, extremeWatermark(r))
		}
		slices.Sort(wms)
		for _, wm := range wms {
			emitted := map[[2]int64]bool{}
			next := set.Fire(wm, s.Lateness, func(w *Win[int]) { emitted[[2]int64{w.Start, w.End}] = true })
			wantNext := int64(math.MaxInt64)
			for k, st := range model {
				if st.dropped {
					continue
				}
				due := !st.fired && bi(k[1]-1).Cmp(bi(wm)) <= 0
				if emitted[k] != due {
					t.Fatalf("%+v at wm %d: window %v emitted %v; model says %v", s, wm, k, emitted[k], due)
				}
				st.fired = st.fired || due
				if modelLate(k[1], s.Lateness, wm) {
					st.dropped = true
					continue
				}
				if st.fired {
					wantNext = min(wantNext, clamp(modelCleanup(k[1], s.Lateness)))
				} else {
					wantNext = min(wantNext, k[1]-1)
				}
			}
			if next != wantNext {
				t.Fatalf("%+v at wm %d: Fire asks for %d next; model %d", s, wm, next, wantNext)
			}
			if kept := len(set.W); kept != countKept(model) {
				t.Fatalf("%+v at wm %d: %d windows kept; model %d", s, wm, kept, countKept(model))
			}
		}
	}
}

// fireState is the model's view of one window.
type fireState struct{ fired, dropped bool }

func countKept(m map[[2]int64]*fireState) int {
	n := 0
	for _, st := range m {
		if !st.dropped {
			n++
		}
	}
	return n
}

// TestSpannedSaturates compares Spanned with the model's count, clamped at
// math.MaxInt64, over ranges as wide as int64.
func TestSpannedSaturates(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for trial := 0; trial < 20_000; trial++ {
		s := extremeSpec(r)
		if s.Kind == Session {
			continue
		}
		lo, hi := extremeTime(r), extremeTime(r)
		if lo > hi {
			lo, hi = hi, lo
		}
		slide := s.Slide
		if s.Kind == Tumbling {
			slide = s.Size
		}
		n := add(sub(floorB(bi(hi), bi(slide)), floorB(bi(lo), bi(slide))), ceilB(bi(s.Size), bi(slide)))
		if s.Kind == Tumbling {
			n = add(sub(floorB(bi(hi), bi(slide)), floorB(bi(lo), bi(slide))), bi(1))
		}
		if got, want := s.Spanned(lo, hi), clamp(n); got != want || got < 1 {
			t.Fatalf("%+v: Spanned(%d, %d) = %d; want %d", s, lo, hi, got, want)
		}
	}
}

// TestSessionOutOfRangeSaturates: a time whose session end would overflow
// (which callers reject) still gets a window that contains it, ending at
// +inf, not one that wraps.
func TestSessionOutOfRangeSaturates(t *testing.T) {
	for _, c := range [][2]int64{{math.MaxInt64 - 1, 2}, {math.MaxInt64 - 10, 1 << 62}, {1, math.MaxInt64}} {
		var set Set[int]
		w := set.AddSession(c[0], c[1], 0, math.MinInt64, nil, nil)
		if w == nil || w.Start != c[0] || w.End != math.MaxInt64 {
			t.Errorf("AddSession(%d, gap %d) = %+v; want [%d, +inf)", c[0], c[1], w, c[0])
		}
	}
}
