package weir_test

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

type countResult = weir.WindowResult[string, int64]

// rankModel sorts the results of each window, greatest value first and
// equal values by key, and keeps the first n of each (n 0: ArgMax, those
// equal to the first).
func rankModel(res []countResult, n int) []countResult {
	byWin := map[[2]int64][]countResult{}
	for _, r := range res {
		byWin[[2]int64{r.Start, r.End}] = append(byWin[[2]int64{r.Start, r.End}], r)
	}
	var out []countResult
	for _, rs := range byWin {
		slices.SortFunc(rs, func(a, b countResult) int {
			if c := cmp.Compare(b.Value, a.Value); c != 0 {
				return c
			}
			return strings.Compare(a.Key, b.Key)
		})
		keep := n
		if n == 0 {
			for keep = 1; keep < len(rs) && rs[keep].Value == rs[0].Value; keep++ {
			}
		}
		out = append(out, rs[:min(keep, len(rs))]...)
	}
	return out
}

// checkRankOrder checks that each window's results came in the model's
// order (one instance emits a window's results, in rank order, and the
// sink is one instance).
func checkRankOrder(t *testing.T, got, want []countResult) {
	t.Helper()
	seq := func(rs []countResult) map[[2]int64][]countResult {
		m := map[[2]int64][]countResult{}
		for _, r := range rs {
			m[[2]int64{r.Start, r.End}] = append(m[[2]int64{r.Start, r.End}], r)
		}
		return m
	}
	g := seq(got)
	for w, rs := range seq(want) {
		if !slices.Equal(g[w], rs) {
			t.Errorf("window %v: results in the order %+v; want %+v", w, g[w], rs)
			return
		}
	}
}

// TopN and ArgMax over window counts equal sorting each window's results
// and cutting: many counts tie (about two records per key and window), so
// the order of keys decides. Tumbling, sliding and global windows (the
// last without event time), at every worker count and kind of epoch.
func TestRankAgainstModel(t *testing.T) {
	in := genRecs(61, 4000, 37, maxDelay)
	for _, wm := range winModels() {
		if wm.name == "session" || wm.name == "tumbling-lateness" {
			continue
		}
		counts := results(wm.assign(in), func(rs []rec) int64 { return int64(len(rs)) })
		t.Run(wm.name, func(t *testing.T) {
			for _, c := range smallCfgs() {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					j := c.job()
					var s weir.Stream[rec]
					if wm.name == "global" {
						s = source(c, j, "src", in)
					} else {
						s = timedSource(c, j, "src", in)
					}
					cs := weir.Count(weir.Window(weir.KeyBy(s, recKey), wm.spec(), wm.opts...))
					less := func(a, b int64) bool { return a < b }
					top, hot := &bag[countResult]{}, &bag[countResult]{}
					weir.Sink(weir.TopN(cs, 3, less), top)
					weir.Sink(weir.ArgMax(cs, less), hot)
					run(t, j)
					wantTop, wantHot := rankModel(counts, 3), rankModel(counts, 0)
					checkBag(t, top.out, wantTop)
					checkBag(t, hot.out, wantHot)
					checkRankOrder(t, top.out, wantTop)
					checkRankOrder(t, hot.out, wantHot)
				})
			}
		})
	}
}

// A window that fires again upstream (AllowedLateness) updates TopN's
// input. By default the window's ranking is done once it fired: the
// updates are counted late and dropped. With StateTTL at least the
// upstream lateness, the update replaces its key's result and the window
// is ranked again.
func TestRankUpdatingInput(t *testing.T) {
	in := []rec{
		{ID: 1, Key: "a", TS: 1_000}, {ID: 2, Key: "a", TS: 2_000}, {ID: 3, Key: "b", TS: 3_000}, {ID: 4, Key: "c", TS: 4_000},
		{ID: 5, Key: "x", TS: 20_000}, // the watermark passes 10 s: [0, 10 s) fires
		{ID: 6, Key: "b", TS: 5_000},  // b: 2, fired again
		{ID: 7, Key: "b", TS: 6_000},  // b: 3, fired again
	}
	for _, keep := range []bool{false, true} {
		// An epoch per record, so the watermark moves after every one.
		j := weir.NewJob("updates", weir.Workers(1), weir.EpochRecords(1))
		s := weir.EventTime(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 1}), recTS, 0)
		cs := weir.Count(weir.Window(weir.KeyBy(s, recKey), weir.Tumbling(10*time.Second), weir.AllowedLateness(30*time.Second)))
		var opts []weir.Option
		if keep {
			opts = append(opts, weir.StateTTL(30*time.Second, weir.EventTimeDomain))
		}
		out := &bag[countResult]{}
		weir.Sink(weir.TopN(cs, 1, func(a, b int64) bool { return a < b }, opts...), out)
		if err := runErr(t, j); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range out.out {
			got = append(got, fmt.Sprintf("%d:%s=%d", r.Start, r.Key, r.Value))
		}
		want, late := "0:a=2 20000:x=1", int64(2)
		if keep {
			// a and b tie at 2 (a ranks first), then b leads.
			want, late = "0:a=2 0:a=2 0:b=3 20000:x=1", 0
		}
		if g := strings.Join(got, " "); g != want || j.Metrics().Late != late {
			t.Errorf("StateTTL %v: emitted %s with %d late; want %s with %d late", keep, g, j.Metrics().Late, want, late)
		}
	}
}
