package nexmark

import (
	"slices"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// q11, user sessions: per bidder, sessions of bids with gaps under 10 s
// (a bid 10 s or more after the previous one starts a new session), with
// the number of bids, the first bid's time and the last one's plus 10 s.

const q11Gap = 10_000 // ms

func init() {
	register("q11", &query{
		header: "bidder,bid_count,starttime,endtime", cols: cols("iiii"),
		costed: addQ11, ref: refQ11, base: baseQ11,
	})
}

// addQ11 adds q11; cost, if set, is called for every bid a session
// counts.
func addQ11(ev weir.Stream[gen.NexmarkEvent], sk Sinks, cost func()) {
	b := weir.MapRef(bids(ev), func(e *gen.NexmarkEvent) bidAt { return bidAt{e.Bid.Bidder, e.Bid.DateTime} }, weir.Name("q11-select"), weir.Stateless())
	timed := weir.EventTime(b, func(b bidAt) int64 { return b.DateTime }, MaxOutOfOrder, weir.Name("q11-time"))
	ws := weir.Window(weir.KeyBy(timed, func(b bidAt) int64 { return b.ID }, weir.Name("bidder")),
		weir.Session(q11Gap*time.Millisecond), weir.WindowOptions(weir.Name("q11-session")))
	counts := costedCount(ws, cost)
	emit(weir.MapRef(counts, func(r *weir.WindowResult[int64, int64]) q11Row {
		return q11Row{r.Key, r.Value, r.Start, r.End}
	}, weir.Name("q11"), weir.Stateless()), sk, nil)
}

func refQ11(evs []gen.NexmarkEvent) []string {
	times := map[int64][]int64{}
	for _, e := range evs {
		if e.Kind == gen.BidKind {
			times[e.Bid.Bidder] = append(times[e.Bid.Bidder], e.Bid.DateTime)
		}
	}
	var rs []q11Row
	for bidder, ts := range times {
		slices.Sort(ts)
		start := 0
		for i := 1; i <= len(ts); i++ {
			if i == len(ts) || ts[i]-ts[i-1] >= q11Gap {
				rs = append(rs, q11Row{bidder, int64(i - start), ts[start], ts[i-1] + q11Gap})
				start = i
			}
		}
	}
	return rowsOf(rs)
}

// baseQ11 keeps each bidder's open session; bids come in time order from
// the generator, so a bid 10 s after its bidder's last closes the session.
func baseQ11(g gen.Nexmark) (c Checksum, n int64, err error) {
	open := map[int64]*q11Row{}
	n, err = forEach(g, func(e *gen.NexmarkEvent) {
		if e.Kind != gen.BidKind {
			return
		}
		t := e.Bid.DateTime
		s := open[e.Bid.Bidder]
		switch {
		case s == nil:
			open[e.Bid.Bidder] = &q11Row{e.Bid.Bidder, 1, t, t + q11Gap}
			return
		case t >= s.End:
			c.add(s.hash())
			s.Count, s.Start = 0, t
		}
		s.Count++
		s.End = t + q11Gap
	})
	for _, s := range open {
		c.add(s.hash())
	}
	return c, n, err
}

type q11Row struct{ Bidder, Count, Start, End int64 }

func (r *q11Row) csv(l line) line { return l.int(r.Bidder).int(r.Count).int(r.Start).int(r.End) }
func (r *q11Row) hash() uint64 {
	return newHasher().int(r.Bidder).int(r.Count).int(r.Start).int(r.End).sum()
}
