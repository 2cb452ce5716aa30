package nexmark

import (
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// q7, highest bid: per 10 s tumbling window, the bids at the window's
// highest price.

const q7Size = 10_000 // ms

func init() {
	register("q7", &query{
		header: "auction,price,bidder,dateTime,extra", cols: cols("iiiis"),
		add: addQ7, ref: refQ7, base: baseQ7,
	})
}

func addQ7(ev weir.Stream[gen.NexmarkEvent], sk Sinks) {
	b := weir.MapRef(bids(ev), func(e *gen.NexmarkEvent) q7Row { return q7Row(toBidRow(&e.Bid)) }, weir.Name("q7-select"), weir.Stateless())
	timed := weir.EventTime(b, func(b q7Row) int64 { return b.DateTime }, MaxOutOfOrder, weir.Name("q7-time"))
	top := weir.Aggregate(weir.WindowAll(timed, weir.Tumbling(q7Size*time.Millisecond), weir.WindowOptions(weir.Name("q7-max"))),
		weir.Aggregator[q7Row, argMax[q7Row], argMax[q7Row]]{
			Add:   func(a argMax[q7Row], b q7Row) argMax[q7Row] { return a.add(b.Price, b) },
			Merge: argMax[q7Row].merge,
		})
	emit(weir.FlatMap(top, func(r weir.WindowResult[weir.Unit, argMax[q7Row]], out []q7Row) []q7Row {
		return append(out, r.Value.Of...)
	}, weir.Name("q7"), weir.Stateless()), sk, nil)
}

func refQ7(evs []gen.NexmarkEvent) []string {
	most := map[int64]int64{} // window start -> highest price
	for _, e := range evs {
		if e.Kind == gen.BidKind {
			w := floorDiv(e.Bid.DateTime, q7Size)
			if p, ok := most[w]; !ok || e.Bid.Price > p {
				most[w] = e.Bid.Price
			}
		}
	}
	var rs []q7Row
	for _, e := range evs {
		if e.Kind == gen.BidKind && e.Bid.Price == most[floorDiv(e.Bid.DateTime, q7Size)] {
			rs = append(rs, q7Row(toBidRow(&e.Bid)))
		}
	}
	return rowsOf(rs)
}

// baseQ7 keeps the current window's highest bids; bids come in time order
// from the generator, so a window is done when a bid of a later one comes.
func baseQ7(g gen.Nexmark) (c Checksum, n int64, err error) {
	var h argMax[q7Row] // its array reused from window to window
	window := int64(0)
	flush := func() {
		for i := range h.Of {
			c.add(h.Of[i].hash())
		}
		h.Of = h.Of[:0]
	}
	n, err = forEach(g, func(e *gen.NexmarkEvent) {
		if e.Kind != gen.BidKind {
			return
		}
		if w := floorDiv(e.Bid.DateTime, q7Size); w != window || len(h.Of) == 0 {
			flush()
			window = w
		}
		switch b := &e.Bid; {
		case len(h.Of) == 0 || b.Price > h.Max:
			h.Max, h.Of = b.Price, append(h.Of[:0], q7Row(toBidRow(b)))
		case b.Price == h.Max:
			h.Of = append(h.Of, q7Row(toBidRow(b)))
		}
	})
	flush()
	return c, n, err
}

// q7Row is a bid, written as auction,price,bidder,dateTime,extra.
type q7Row bidRow

func (r *q7Row) csv(l line) line {
	return l.int(r.Auction).int(r.Price).int(r.Bidder).int(r.DateTime).str(r.Extra)
}

func (r *q7Row) hash() uint64 {
	return newHasher().int(r.Auction).int(r.Price).int(r.Bidder).int(r.DateTime).str(r.Extra).sum()
}
