package weir_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// The tests in this file feed jobs event times near the ends of int64 and
// compare them with a model in math/big arithmetic, which cannot overflow
// and so needs no infinities: its watermark starts far below any int64 and
// the end of the input is a watermark far above. A job either gives exactly
// the model's results or, if a time's windows do not fit in int64, fails
// naming that time.

var farBelow, farAbove = new(big.Int).Lsh(big.NewInt(-1), 100), new(big.Int).Lsh(big.NewInt(1), 100)

func bi(x int64) *big.Int           { return big.NewInt(x) }
func badd(a, b *big.Int) *big.Int   { return new(big.Int).Add(a, b) }
func bsub(a, b *big.Int) *big.Int   { return new(big.Int).Sub(a, b) }
func bfloor(a, d *big.Int) *big.Int { return new(big.Int).Div(a, d) } // Euclidean: floor for d > 0
func bfits(x *big.Int) bool         { return x.IsInt64() }
func ble(a, b *big.Int) bool        { return a.Cmp(b) <= 0 }

func bmax(a, b *big.Int) *big.Int {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}

// bclampAdd is a+d, clamped to int64.
func bclampAdd(a, d int64) int64 { return clampBig(badd(bi(a), bi(d))) }

func clampBig(x *big.Int) int64 {
	switch {
	case x.Cmp(bi(math.MaxInt64)) > 0:
		return math.MaxInt64
	case x.Cmp(bi(math.MinInt64)) < 0:
		return math.MinInt64
	}
	return x.Int64()
}

// xspec is a window spec in milliseconds, for the job and for the model.
type xspec struct {
	kind                       string // tumbling, sliding, session
	size, slide, gap, lateness int64
}

func (s xspec) String() string {
	return fmt.Sprintf("%s size %d slide %d gap %d lateness %d", s.kind, s.size, s.slide, s.gap, s.lateness)
}

func msDur(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

func (s xspec) public() (weir.WindowSpec, weir.WindowOption) {
	late := weir.AllowedLateness(msDur(s.lateness))
	switch s.kind {
	case "tumbling":
		return weir.Tumbling(msDur(s.size)), late
	case "sliding":
		return weir.Sliding(msDur(s.size), msDur(s.slide)), late
	}
	return weir.Session(msDur(s.gap)), late
}

// windows is every [start, end) of a tumbling or sliding spec containing
// ts: starts k*slide with k*slide <= ts < k*slide+size.
func (s xspec) windows(ts int64) [][2]*big.Int {
	size, slide := bi(s.size), bi(s.slide)
	if s.kind == "tumbling" {
		slide = size
	}
	below := bsub(bi(ts), size) // every start is above it
	var out [][2]*big.Int
	for k := bfloor(bi(ts), slide); ; k = bsub(k, bi(1)) {
		start := new(big.Int).Mul(k, slide)
		if ble(start, below) {
			return out
		}
		out = append(out, [2]*big.Int{start, badd(start, size)})
	}
}

// valid: the windows of ts fit in int64 and ts is neither of the values
// the engine uses as -inf and +inf.
func (s xspec) valid(ts int64) bool {
	if ts == math.MinInt64 || ts == math.MaxInt64 {
		return false
	}
	if s.kind == "session" {
		return bfits(badd(bi(ts), bi(s.gap)))
	}
	for _, w := range s.windows(ts) {
		if !bfits(w[0]) || !bfits(w[1]) {
			return false
		}
	}
	return true
}

// maxMs is the largest length a time.Duration holds in milliseconds.
const maxMs = math.MaxInt64 / int64(time.Millisecond)

func randLen(r *rand.Rand) int64 {
	switch r.IntN(4) {
	case 0:
		return 1 + r.Int64N(5)
	case 1:
		return 100
	case 2:
		return maxMs - r.Int64N(3)
	}
	return 1 + r.Int64N(int64(1)<<r.IntN(43))
}

func randXspec(r *rand.Rand, sessions bool) xspec {
	s := xspec{kind: "tumbling", size: randLen(r)}
	switch r.IntN(3) {
	case 1:
		s.kind = "sliding"
		s.slide = max(1, s.size/(1+r.Int64N(8)))
	case 2:
		if sessions {
			s = xspec{kind: "session", gap: randLen(r)}
		}
	}
	if r.IntN(2) == 0 {
		s.lateness = randLen(r) - 1
	}
	return s
}

// extremeRecs makes n records with times around a center near an end of
// int64, near 0 or near ±2^53, within a few window lengths of it, so that
// windows and watermarks near the ends are exercised; scale is the spread.
func extremeRecs(r *rand.Rand, n int, scale int64) []rec {
	centers := []int64{math.MinInt64, math.MaxInt64, 0, 1 << 53, -1 << 53}
	center := centers[r.IntN(len(centers))]
	out := make([]rec, n)
	for i := range out {
		c := center
		if r.IntN(30) == 0 {
			c = centers[r.IntN(len(centers))] // now and then far away
		}
		off := r.Int64N(max(1, scale)) - scale/2
		if r.IntN(4) == 0 {
			off = r.Int64N(7) - 3
		}
		out[i] = rec{ID: i, Key: "k" + strconv.Itoa(r.IntN(3)), TS: bclampAdd(c, off)}
	}
	return out
}

// stepModel is the window operator of a stepJob (each record an epoch of
// its own) in exact arithmetic: every firing and the late records.
func stepModel(in []rec, s xspec, slack int64) (fired []weir.WindowResult[string, int64], late []rec) {
	type state struct {
		n            int64
		fired, dirty bool
	}
	wins := map[winKey]*state{}
	L := bi(s.lateness)
	past := func(end int64, wm *big.Int) bool { return ble(badd(bsub(bi(end), bi(1)), L), wm) }
	fire := func(wm *big.Int) {
		for k, st := range wins {
			if ble(bsub(bi(k.End), bi(1)), wm) && (!st.fired || st.dirty) {
				fired = append(fired, weir.WindowResult[string, int64]{Key: k.Key, Start: k.Start, End: k.End, Value: st.n})
				st.fired, st.dirty = true, false
			}
			if past(k.End, wm) {
				delete(wins, k)
			}
		}
	}
	wm, maxTS := farBelow, farBelow
	for _, r := range in {
		isLate := true
		for _, w := range s.windows(r.TS) {
			k := winKey{r.Key, w[0].Int64(), w[1].Int64()}
			if past(k.End, wm) {
				continue
			}
			isLate = false
			st := wins[k]
			if st == nil {
				st = &state{}
				wins[k] = st
			}
			st.n++
			st.dirty = st.fired
		}
		if isLate {
			late = append(late, r)
		}
		maxTS = bmax(maxTS, bi(r.TS))
		wm = bmax(wm, bsub(bsub(maxTS, bi(slack)), bi(1)))
		fire(wm)
	}
	fire(farAbove)
	return fired, late
}

// wantBadTime checks that err is the EventTime error for one of the
// times in bad.
func wantBadTime(t *testing.T, err error, bad []rec) {
	t.Helper()
	if err == nil {
		t.Fatalf("the job succeeded; want it to fail on a time outside int64 windows, such as %+v", bad[0])
	}
	msg := err.Error()
	if !strings.Contains(msg, `EventTime "ts"`) || !strings.Contains(msg, "outside the range windows can hold") {
		t.Fatalf("error %q does not name EventTime \"ts\" and the range", msg)
	}
	for _, r := range bad {
		if strings.Contains(msg, fmt.Sprintf("event time %d of record %v", r.TS, r)) {
			return
		}
	}
	t.Fatalf("error %q names none of the records with bad times %v", msg, bad)
}

// TestExtremeTimesStepModel runs tumbling and sliding windows, with and
// without lateness, over disordered times near the ends of int64 in a
// stepJob, whose watermarks are known, and compares every firing and every
// late record with stepModel.
func TestExtremeTimesStepModel(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	failed, passed := 0, 0
	for trial := range 300 {
		s := randXspec(r, false)
		slack := []int64{0, 3, randLen(r) - 1}[r.IntN(3)]
		in := extremeRecs(r, 1+r.IntN(25), 3*max(s.size, slack+1))
		var bad []rec
		for _, x := range in {
			if !s.valid(x.TS) {
				bad = append(bad, x)
			}
		}
		name := fmt.Sprintf("%d/%v/slack%d", trial, s, slack)
		j := stepJob()
		ws, late := s.public()
		timed := weir.EventTime(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 1}), recTS, msDur(slack), weir.Name("ts"))
		w := weir.Window(weir.KeyBy(timed, recKey), ws, late)
		out := &weir.Collect[weir.WindowResult[string, int64]]{}
		lateOut := &weir.Collect[rec]{}
		weir.Sink(weir.Count(w), out)
		weir.Sink(w.Late(), lateOut)
		err := j.Run(context.Background())
		if len(bad) > 0 {
			failed++
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("event time %d of record %v", bad[0].TS, bad[0])) {
				t.Fatalf("%s: Run = %v; want the error for the first bad record %+v", name, err, bad[0])
			}
			wantBadTime(t, err, bad[:1])
			continue
		}
		passed++
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wantOut, wantLate := stepModel(in, s, slack)
		checkBagNamed(t, name, out.Records(), wantOut)
		if got := lateOut.Records(); !slices.Equal(got, wantLate) {
			t.Fatalf("%s: late records %v; model %v", name, got, wantLate)
		}
		if n := j.Metrics().Late; n != int64(len(wantLate)) {
			t.Fatalf("%s: Metrics().Late = %d; model %d", name, n, len(wantLate))
		}
	}
	if failed < 10 || passed < 50 {
		t.Fatalf("%d runs failed on bad times and %d ran: the inputs do not test both", failed, passed)
	}
}

func checkBagNamed[T comparable](t *testing.T, name string, got, want []T) {
	t.Helper()
	diff := map[T]int{}
	for _, v := range got {
		diff[v]++
	}
	for _, v := range want {
		diff[v]--
	}
	for v, n := range diff {
		if n != 0 {
			t.Fatalf("%s: got %d results, model %d; e.g. %+v: %+d (extra +, missing -)", name, len(got), len(want), v, n)
		}
	}
}

// groupModel is the windows of sorted input, where nothing is late and
// each window fires once: the count per key and window, in exact
// arithmetic, sessions merged.
func groupModel(in []rec, s xspec) []weir.WindowResult[string, int64] {
	counts := map[winKey]int64{}
	if s.kind != "session" {
		for _, r := range in {
			for _, w := range s.windows(r.TS) {
				counts[winKey{r.Key, w[0].Int64(), w[1].Int64()}]++
			}
		}
	} else {
		byKey := map[string][]int64{}
		for _, r := range in {
			byKey[r.Key] = append(byKey[r.Key], r.TS)
		}
		for k, ts := range byKey {
			slices.Sort(ts)
			var start, end *big.Int
			var n int64
			flush := func() {
				if n > 0 {
					counts[winKey{k, start.Int64(), end.Int64()}] = n
				}
			}
			for _, x := range ts {
				if end == nil || !(bi(x).Cmp(end) < 0) {
					flush()
					start, end, n = bi(x), badd(bi(x), bi(s.gap)), 0
				}
				end = bmax(end, badd(bi(x), bi(s.gap)))
				n++
			}
			flush()
		}
	}
	var out []weir.WindowResult[string, int64]
	for k, n := range counts {
		out = append(out, weir.WindowResult[string, int64]{Key: k.Key, Start: k.Start, End: k.End, Value: n})
	}
	return out
}

// TestExtremeTimesParallel runs sorted input near the ends of int64 on
// several workers under every partitioning strategy (so the pre-aggregating
// exchanges see those times too), with sessions as well: with times in
// order nothing is late, and the results must be the model's counts.
func TestExtremeTimesParallel(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 74))
	failed, passed := 0, 0
	for trial := range 100 {
		s := randXspec(r, true)
		scale := 3 * max(s.size, s.gap)
		in := extremeRecs(r, 20+r.IntN(200), scale)
		if r.IntN(3) > 0 { // mostly one cluster: drop the far-away records
			c := in[0].TS
			in = slices.DeleteFunc(in, func(x rec) bool { return new(big.Int).Abs(bsub(bi(x.TS), bi(c))).Cmp(bi(2*scale)) > 0 })
		}
		slices.SortStableFunc(in, func(a, b rec) int { return cmp.Compare(a.TS, b.TS) })
		var bad []rec
		for _, x := range in {
			if !s.valid(x.TS) {
				bad = append(bad, x)
			}
		}
		strategy := strategies[trial%len(strategies)]
		if s.kind == "session" && (strategy == "pkg" || strategy == "prompt") {
			strategy = "hash"
		}
		name := fmt.Sprintf("%d/%v/%s", trial, s, strategy)
		j := weir.NewJob("extreme", weir.Workers(2), weir.BatchSize(8), weir.EpochRecords(5), weir.Partitioning(strategy))
		ws, late := s.public()
		timed := weir.EventTime(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 3}), recTS, 0, weir.Name("ts"))
		out := &weir.Collect[weir.WindowResult[string, int64]]{}
		weir.Sink(weir.Count(weir.Window(weir.KeyBy(timed, recKey), ws, late)), out)
		err := j.Run(context.Background())
		if len(bad) > 0 {
			failed++
			wantBadTime(t, err, bad)
			continue
		}
		passed++
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkBagNamed(t, name, out.Records(), groupModel(in, s))
		if n := j.Metrics().Late; n != 0 {
			t.Fatalf("%s: %d late records of sorted input", name, n)
		}
	}
	if failed < 3 || passed < 15 {
		t.Fatalf("%d runs failed on bad times and %d ran: the inputs do not test both", failed, passed)
	}
}
