package nexmark

import (
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// q5, hot items: per sliding window of 10 s every 2 s, the auctions with
// the most bids (all of them on a tie), with their number of bids.

const (
	q5Size  = 10_000 // ms
	q5Slide = 2_000
)

func init() {
	register("q5", &query{
		header: "auction,num", cols: cols("ii"),
		costed: addQ5, ref: refQ5, base: baseQ5,
	})
}

// bidAt is a bid reduced to its auction (or bidder) and time.
type bidAt struct{ ID, DateTime int64 }

// addQ5 adds q5; cost, if set, is called for every bid a pane counts.
func addQ5(ev weir.Stream[gen.NexmarkEvent], sk Sinks, cost func()) {
	b := weir.MapRef(bids(ev), func(e *gen.NexmarkEvent) bidAt { return bidAt{e.Bid.Auction, e.Bid.DateTime} }, weir.Name("q5-select"), weir.Stateless())
	timed := weir.EventTime(b, func(b bidAt) int64 { return b.DateTime }, MaxOutOfOrder, weir.Name("q5-time"))
	// Each bid is counted in its 2 s pane; a window's count is the sum of
	// its five panes' (a pane's count has the event time of its end - 1,
	// which falls in the windows that hold the pane).
	ws := weir.Window(weir.KeyBy(timed, func(b bidAt) int64 { return b.ID }, weir.Name("auction")),
		weir.Tumbling(q5Slide*time.Millisecond), weir.WindowOptions(weir.Name("q5-pane")))
	panes := costedCount(ws, cost)
	counts := weir.Aggregate(weir.Window(weir.KeyBy(panes, func(r weir.WindowResult[int64, int64]) int64 { return r.Key }, weir.Name("auction")),
		weir.Sliding(q5Size*time.Millisecond, q5Slide*time.Millisecond), weir.WindowOptions(weir.Name("q5-count"))),
		weir.Aggregator[weir.WindowResult[int64, int64], int64, int64]{
			Add:   func(n int64, r weir.WindowResult[int64, int64]) int64 { return n + r.Value },
			Merge: func(a, b int64) int64 { return a + b },
		})
	hot := weir.ArgMax(counts, func(a, b int64) bool { return a < b }, weir.Name("q5-max"))
	rows := weir.MapRef(hot, func(r *weir.WindowResult[int64, int64]) q5Row { return q5Row{r.Key, r.Value} }, weir.Name("q5"), weir.Stateless())
	emit(rows, sk, nil)
}

// costedCount counts the records of each window of each key, calling
// cost (if set) for every record it folds.
func costedCount[K comparable, T any](ws weir.WindowedStream[K, T], cost func()) weir.Stream[weir.WindowResult[K, int64]] {
	if cost == nil {
		return weir.Count(ws)
	}
	return weir.Aggregate(ws, weir.Aggregator[T, int64, int64]{
		Add:   func(n int64, _ T) int64 { cost(); return n + 1 },
		Merge: func(a, b int64) int64 { return a + b },
	})
}

// floorDiv is the multiple of d at or below t.
func floorDiv(t, d int64) int64 {
	s := t - t%d
	if t%d < 0 {
		s -= d
	}
	return s
}

func refQ5(evs []gen.NexmarkEvent) []string {
	counts := map[int64]map[int64]int64{} // window start -> auction -> bids
	for _, e := range evs {
		if e.Kind != gen.BidKind {
			continue
		}
		t := e.Bid.DateTime
		for s := floorDiv(t, q5Slide); s > t-q5Size; s -= q5Slide {
			if counts[s] == nil {
				counts[s] = map[int64]int64{}
			}
			counts[s][e.Bid.Auction]++
		}
	}
	var rs []q5Row
	for _, c := range counts {
		most := int64(0)
		for _, n := range c {
			most = max(most, n)
		}
		for a, n := range c {
			if n == most {
				rs = append(rs, q5Row{a, n})
			}
		}
	}
	return rowsOf(rs)
}

// baseQ5 counts the bids of each auction per 2 s pane, and sums the five
// panes of a window once the bids have passed its end (they come in time
// order from the generator).
func baseQ5(g gen.Nexmark) (c Checksum, n int64, err error) {
	panes := map[int64]map[int64]int64{} // pane start -> auction -> bids
	next := int64(0)                     // the next window start to fire
	started := false
	sum := map[int64]int64{}
	fire := func(start int64) {
		clear(sum)
		for p := start; p < start+q5Size; p += q5Slide {
			for a, k := range panes[p] {
				sum[a] += k
			}
		}
		delete(panes, start)
		most := int64(0)
		for _, k := range sum {
			most = max(most, k)
		}
		for a, k := range sum {
			if k == most {
				r := q5Row{a, k}
				c.add(r.hash())
			}
		}
	}
	n, err = forEach(g, func(e *gen.NexmarkEvent) {
		if e.Kind != gen.BidKind {
			return
		}
		t := e.Bid.DateTime
		p := floorDiv(t, q5Slide)
		if !started {
			next, started = p-q5Size+q5Slide, true
		}
		for ; next+q5Size <= t; next += q5Slide {
			fire(next)
		}
		m := panes[p]
		if m == nil {
			m = map[int64]int64{}
			panes[p] = m
		}
		m[e.Bid.Auction]++
	})
	for ; started && len(panes) > 0; next += q5Slide {
		fire(next)
	}
	return c, n, err
}

type q5Row struct{ Auction, Num int64 }

func (r *q5Row) csv(l line) line { return l.int(r.Auction).int(r.Num) }
func (r *q5Row) hash() uint64    { return newHasher().int(r.Auction).int(r.Num).sum() }
