package weir_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// intervalModel is the model of IntervalJoin: nested loops over all pairs
// of a left and a right record, kept when the keys are equal and
// l.ts+lower <= r.ts <= l.ts+upper.
func intervalModel(left, right []rec, lower, upper int64) []joined {
	var out []joined
	for _, l := range left {
		for _, r := range right {
			if l.Key == r.Key && l.TS+lower <= r.TS && r.TS <= l.TS+upper {
				out = append(out, joinRecs(l.Key, l, r))
			}
		}
	}
	return out
}

// innerModel is the model of InnerJoin without a TTL: every pair with
// equal keys.
func innerModel(left, right []rec) []joined {
	return intervalModel(left, right, -1<<62, 1<<62)
}

// pairWindows is the model of a tumbling count downstream of a join whose
// outputs carry the later of the pair's times.
func pairWindows(left, right []rec, pairs []joined, size int64) []weir.WindowResult[string, int64] {
	ts := func(rs []rec) map[int]int64 {
		m := map[int]int64{}
		for _, r := range rs {
			m[r.ID] = r.TS
		}
		return m
	}
	lt, rt := ts(left), ts(right)
	counts := map[winKey]int64{}
	for _, p := range pairs {
		t := max(lt[p.L], rt[p.R])
		counts[winKey{p.Key, t - t%size, t - t%size + size}]++
	}
	var out []weir.WindowResult[string, int64]
	for k, n := range counts {
		out = append(out, weir.WindowResult[string, int64]{Key: k.Key, Start: k.Start, End: k.End, Value: n})
	}
	return out
}

func joinInputs() (left, right []rec) {
	return genRecs(41, 1500, 37, maxDelay), genRecs(42, 1100, 37, maxDelay)
}

// joinRun runs join over the join inputs under c (the right source at
// half the workers), with event time or without, and returns its pairs
// and, with event time, their counts per key in 100 ms windows
// downstream.
func joinRun(t *testing.T, c runCfg, timed bool, join func(l, r weir.KeyedStream[string, rec]) weir.Stream[joined]) (pairs []joined, counts []countResult) {
	left, right := joinInputs()
	j := c.job()
	in := source[rec]
	if timed {
		in = func(c runCfg, j *weir.Job, name string, recs []rec, opts ...weir.Option) weir.Stream[rec] {
			return timedSource(c, j, name, recs, opts...)
		}
	}
	l := weir.KeyBy(in(c, j, "left", left), recKey)
	r := weir.KeyBy(in(c, j, "right", right, weir.Parallelism(max(1, c.workers/2))), recKey)
	joinedS := join(l, r)
	out, cs := &bag[joined]{}, &bag[countResult]{}
	weir.Sink(joinedS, out)
	if timed {
		weir.Sink(weir.Count(weir.Window(weir.KeyBy(joinedS, func(p joined) string { return p.Key }), weir.Tumbling(100*time.Millisecond))), cs)
	}
	run(t, j)
	return out.out, cs.out
}

// IntervalJoin gives the nested loops' pairs for bounds below, around and
// above zero, at every worker count and kind of epoch, with no record
// late; its outputs carry the later time of their pair (a window
// downstream counts them there).
func TestIntervalJoinAgainstModel(t *testing.T) {
	left, right := joinInputs()
	bounds := []struct{ lower, upper time.Duration }{
		{-20 * time.Millisecond, 30 * time.Millisecond}, {0, 0}, {5 * time.Millisecond, 60 * time.Millisecond}, {-100 * time.Millisecond, -10 * time.Millisecond},
	}
	for _, b := range bounds {
		lo, hi := b.lower.Milliseconds(), b.upper.Milliseconds()
		want := intervalModel(left, right, lo, hi)
		wantWin := pairWindows(left, right, want, 100)
		t.Run(fmt.Sprintf("%d..%d", lo, hi), func(t *testing.T) {
			for _, c := range smallCfgs() {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					pairs, counts := joinRun(t, c, true, func(l, r weir.KeyedStream[string, rec]) weir.Stream[joined] {
						return weir.IntervalJoin(l, r, b.lower, b.upper, joinRecs)
					})
					checkBag(t, pairs, want)
					checkBag(t, counts, wantWin)
				})
			}
		})
	}
}

// InnerJoin without a TTL gives every pair of equal keys, with event time
// (its outputs at the later time of their pair) or without.
func TestInnerJoinAgainstModel(t *testing.T) {
	left, right := joinInputs()
	want := innerModel(left, right)
	wantWin := pairWindows(left, right, want, 100)
	for _, c := range smallCfgs() {
		inner := func(l, r weir.KeyedStream[string, rec]) weir.Stream[joined] { return weir.InnerJoin(l, r, joinRecs) }
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pairs, counts := joinRun(t, c, true, inner)
			checkBag(t, pairs, want)
			checkBag(t, counts, wantWin)
		})
		t.Run(c.name+"/untimed", func(t *testing.T) {
			t.Parallel()
			pairs, _ := joinRun(t, c, false, inner)
			checkBag(t, pairs, want)
		})
	}
}

// checkBetween checks that got holds every pair of must and only pairs of
// may, each at most once, and fewer than may: a TTL dropped some state.
func checkBetween(t *testing.T, got, must, may []joined) {
	t.Helper()
	seen := map[joined]int{}
	for _, p := range got {
		seen[p]++
	}
	allowed := map[joined]bool{}
	for _, p := range may {
		allowed[p] = true
	}
	for p, n := range seen {
		if n != 1 || !allowed[p] {
			t.Fatalf("pair %+v emitted %d times (allowed: %v)", p, n, allowed[p])
		}
	}
	for _, p := range must {
		if seen[p] != 1 {
			t.Fatalf("pair %+v, within the TTL of each other, is missing", p)
		}
	}
	if len(got) >= len(may) {
		t.Errorf("%d pairs: a TTL of 100ms over %d pairs dropped nothing", len(got), len(may))
	}
}

// Under StateTTL in event time, every pair whose times are within the
// TTL of each other is emitted (the first record is kept until the
// watermark passes its time plus the TTL, and the watermark stays behind
// the second record), nothing else but pairs of the full join, and not
// all of those.
func TestInnerJoinEventTTL(t *testing.T) {
	left, right := joinInputs()
	all := innerModel(left, right)
	near := intervalModel(left, right, -100, 100)
	for _, c := range smallCfgs() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pairs, _ := joinRun(t, c, true, func(l, r weir.KeyedStream[string, rec]) weir.Stream[joined] {
				return weir.InnerJoin(l, r, joinRecs, weir.StateTTL(100*time.Millisecond, weir.EventTimeDomain))
			})
			checkBetween(t, pairs, near, all)
		})
	}
}

// A TTL drops a record once it expired: a right record that arrives after
// its left partner's TTL passed (in event time: the watermark moved 5 s
// on; in processing time: 150 ms of wall time later, for a TTL of 20 ms)
// meets nothing, while a pair that arrives together meets.
func TestInnerJoinTTLExpires(t *testing.T) {
	filler := func(from int64, n int) []rec {
		var out []rec
		for i := range n {
			out = append(out, rec{ID: 100 + i, Key: "filler", TS: from + int64(i)*100})
		}
		return out
	}
	for _, domain := range []weir.TimeDomain{weir.EventTimeDomain, weir.ProcessingTimeDomain} {
		// An epoch per record: the sources go in step, so the last
		// records of both meet in the same epoch.
		left := append(append([]rec{{ID: 1, Key: "a", TS: 1_000}}, filler(1_000, 60)...), rec{ID: 2, Key: "b", TS: 7_000})
		right := append(filler(1_000, 60), rec{ID: 3, Key: "a", TS: 7_000}, rec{ID: 4, Key: "b", TS: 7_000})
		j := weir.NewJob("ttl", weir.Workers(1), weir.EpochRecords(1))
		slow := func(name string, rs []rec) weir.Stream[rec] {
			src := weir.Source(j, name, slowInput[rec]{weir.SliceSource[rec]{Records: rs, BatchSize: 1}, 10 * time.Millisecond})
			return weir.EventTime(src, recTS, 0)
		}
		ls, rs := slow("left", left), slow("right", right)
		noFiller := func(r rec) bool { return r.Key != "filler" }
		ttl := time.Second
		if domain == weir.ProcessingTimeDomain {
			ttl = 20 * time.Millisecond
		}
		out := &bag[joined]{}
		weir.Sink(weir.InnerJoin(weir.KeyBy(weir.Filter(ls, noFiller, weir.Stateless()), recKey), weir.KeyBy(weir.Filter(rs, noFiller, weir.Stateless()), recKey),
			joinRecs, weir.StateTTL(ttl, domain)), out)
		run(t, j)
		if want := []joined{{"b", 2, 4}}; !slices.Equal(out.out, want) {
			t.Errorf("%v: pairs %+v; want %+v (a's left record expired before its right one came)", domain, out.out, want)
		}
	}
}

// Settings that cannot work are refused by Run, naming the operator.
func TestJoinsRefuseBadSettings(t *testing.T) {
	type build func(j *weir.Job)
	timed := func(j *weir.Job, name string) weir.KeyedStream[string, rec] {
		return weir.KeyBy(weir.EventTime(weir.Source(j, name, weir.SliceSource[rec]{Records: make([]rec, 3)}), recTS, 0), recKey)
	}
	untimed := func(j *weir.Job, name string) weir.KeyedStream[string, rec] {
		return weir.KeyBy(weir.Source(j, name, weir.SliceSource[rec]{Records: make([]rec, 3)}), recKey)
	}
	counts := func(j *weir.Job) weir.Stream[weir.WindowResult[string, int64]] {
		return weir.Count(weir.Window(timed(j, "c"), weir.Tumbling(time.Second)))
	}
	less := func(a, b int64) bool { return a < b }
	cases := []struct {
		b    build
		want string
	}{
		{func(j *weir.Job) {
			weir.IntervalJoin(untimed(j, "l"), timed(j, "r"), 0, time.Second, joinRecs, weir.Name("ij"))
		}, "weir: ij: an interval join needs event time on both inputs"},
		{func(j *weir.Job) {
			weir.IntervalJoin(timed(j, "l"), timed(j, "r"), time.Second, 0, joinRecs, weir.Name("ij"))
		}, "weir: ij: lower bound 1s is above upper bound 0s"},
		{func(j *weir.Job) {
			weir.IntervalJoin(timed(j, "l"), timed(j, "r"), 0, time.Second, joinRecs, weir.Name("ij"), weir.StateTTL(time.Second, weir.EventTimeDomain))
		}, "weir: ij: StateTTL does not apply to an interval join"},
		{func(j *weir.Job) {
			weir.InnerJoin(untimed(j, "l"), timed(j, "r"), joinRecs, weir.Name("inner"), weir.StateTTL(time.Second, weir.EventTimeDomain))
		}, "weir: inner: StateTTL(1s, event time) needs event time on both inputs"},
		{func(j *weir.Job) {
			weir.InnerJoin(timed(j, "l"), timed(j, "r"), joinRecs, weir.Name("inner"), weir.StateTTL(time.Microsecond, weir.ProcessingTimeDomain))
		}, "weir: inner: StateTTL(1µs): the time-to-live must be at least 1ms"},
		{func(j *weir.Job) {
			weir.InnerJoin[string, rec, rec, joined](timed(j, "l"), timed(j, "r"), nil, weir.Name("inner"))
		}, "weir: inner: the join function is nil"},
		{func(j *weir.Job) { weir.TopN(counts(j), 0, less, weir.Name("top")) }, "weir: top: TopN(0): n must be at least 1"},
		{func(j *weir.Job) { weir.TopN(counts(j), 3, nil, weir.Name("top")) }, "weir: top: less is nil"},
		{func(j *weir.Job) { weir.ArgMax(counts(j), nil, weir.Name("max")) }, "weir: max: less is nil"},
		{func(j *weir.Job) {
			weir.ArgMax(counts(j), less, weir.Name("max"), weir.StateTTL(time.Second, weir.ProcessingTimeDomain))
		}, "weir: max: StateTTL(1s, processing time): a window's results are kept in event time only"},
		{func(j *weir.Job) {
			weir.Count(weir.WindowAll(timed(j, "s").Stream(), weir.Tumbling(time.Second), weir.WindowOptions(weir.Name("all"), weir.Parallelism(2))))
		}, "weir: all: Parallelism(2): a window over a whole stream runs as one instance"},
		{func(j *weir.Job) {
			weir.Count(weir.WindowAll(untimed(j, "s").Stream(), weir.Tumbling(time.Second), weir.WindowOptions(weir.Name("all"))))
		}, "weir: all: tumbling 1s windows need event time"},
	}
	for _, c := range cases {
		j := weir.NewJob("bad")
		c.b(j)
		err := runRecovered(t, j)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Run = %v; want an error containing %q", err, c.want)
		}
	}
}
