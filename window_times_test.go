package weir_test

import (
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// resultWindows is the model of a tumbling window of size d over results
// that carry event time End−1: how many results fall in each.
func resultWindows(ends []int64, d int64) []weir.WindowResult[weir.Unit, int64] {
	n := map[int64]int64{}
	for _, e := range ends {
		n[(e-1)-(e-1)%d]++
	}
	var out []weir.WindowResult[weir.Unit, int64]
	for s, c := range n {
		out = append(out, weir.WindowResult[weir.Unit, int64]{Start: s, End: s + d, Value: c})
	}
	return out
}

// Window results (of every window kind that has event time, of Join and
// of TopN) carry event time End−1: a tumbling window downstream counts
// them where that time falls, so one of the upstream size groups the
// results of one upstream window.
func TestWindowResultTimes(t *testing.T) {
	in := genRecs(81, 3000, 37, maxDelay)
	c := runCfg{name: "w2", workers: 2, opts: []weir.JobOption{weir.Workers(2), weir.EpochRecords(37)}}
	for _, wm := range winModels() {
		if wm.name == "global" {
			continue // its End−1 is math.MaxInt64−1, which no tumbling window holds
		}
		model := wm.assign(in)
		var ends []int64
		for w := range model {
			ends = append(ends, w.End)
		}
		for _, d := range []int64{100, 30} {
			j := c.job()
			counts := weir.Count(weir.Window(weir.KeyBy(timedSource(c, j, "src", in), recKey), wm.spec(), wm.opts...))
			out := &bag[weir.WindowResult[weir.Unit, int64]]{}
			weir.Sink(weir.Count(weir.WindowAll(counts, weir.Tumbling(time.Duration(d)*time.Millisecond))), out)
			run(t, j)
			t.Run(wm.name, func(t *testing.T) { checkBag(t, out.out, resultWindows(ends, d)) })
		}
	}
	// Join's pairs and TopN's results carry the same time.
	left, right := joinInputs()
	var pairEnds, topEnds []int64
	lw, rw := winModels()[0].assign(left), winModels()[0].assign(right)
	perWindow := map[int64]int64{}
	for w, ls := range lw {
		for range ls {
			for range rw[w] {
				pairEnds = append(pairEnds, w.End)
			}
		}
		perWindow[w.End]++
	}
	for end, keys := range perWindow {
		for range min(keys, 2) {
			topEnds = append(topEnds, end)
		}
	}
	j := c.job()
	l := weir.KeyBy(timedSource(c, j, "left", left), recKey)
	r := weir.KeyBy(timedSource(c, j, "right", right), recKey)
	pairs := weir.Join(l, r, weir.Tumbling(100*time.Millisecond), joinRecs)
	top := weir.TopN(weir.Count(weir.Window(l, weir.Tumbling(100*time.Millisecond))), 2, func(a, b int64) bool { return a < b })
	pairCounts, topCounts := &bag[weir.WindowResult[weir.Unit, int64]]{}, &bag[weir.WindowResult[weir.Unit, int64]]{}
	weir.Sink(weir.Count(weir.WindowAll(pairs, weir.Tumbling(100*time.Millisecond))), pairCounts)
	weir.Sink(weir.Count(weir.WindowAll(top, weir.Tumbling(100*time.Millisecond))), topCounts)
	run(t, j)
	t.Run("join", func(t *testing.T) { checkBag(t, pairCounts.out, resultWindows(pairEnds, 100)) })
	t.Run("topN", func(t *testing.T) { checkBag(t, topCounts.out, resultWindows(topEnds, 100)) })
}
