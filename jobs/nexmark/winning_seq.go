package nexmark

import (
	"math"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

func init() {
	register("q9", &query{
		header: "id,itemName,description,initialBid,reserve,dateTime,expires,seller,category,extra,auction,bidder,price,bid_dateTime,bid_extra",
		cols:   cols("issiiiiiisiiiis"),
		add:    func(ev weir.Stream[gen.NexmarkEvent], sk Sinks) { emit(winners(ev), sk, nil) },
		ref:    func(evs []gen.NexmarkEvent) []string { return rowsOf(refWinners(evs)) },
		base: func(g gen.Nexmark) (Checksum, int64, error) {
			var c Checksum
			n, err := baseWinners(g, func(r *q9Row) { c.add(r.hash()) })
			return c, n, err
		},
	})
	register("q4", &query{
		header: "category,avg", cols: cols("if"), updating: true,
		add: addQ4,
		ref: func(evs []gen.NexmarkEvent) []string { return rowsOf(averages(refWinners(evs))) },
		base: func(g gen.Nexmark) (Checksum, int64, error) {
			var c Checksum
			var ws []q9Row
			n, err := baseWinners(g, func(r *q9Row) { ws = append(ws, *r) })
			for _, r := range averages(ws) {
				c.update(r.Category, r.hash())
			}
			return c, n, err
		},
	})
}

// refWinners is q9 computed plainly: every bid against its auction.
func refWinners(evs []gen.NexmarkEvent) []q9Row {
	auctions := map[int64]gen.Auction{}
	for _, e := range evs {
		if _, dup := auctions[e.Auction.ID]; e.Kind == gen.AuctionKind && !dup {
			auctions[e.Auction.ID] = e.Auction
		}
	}
	best := map[int64]bidRow{}
	for _, e := range evs {
		if e.Kind != gen.BidKind {
			continue
		}
		b := toBidRow(&e.Bid)
		a, ok := auctions[b.Auction]
		if !ok || b.DateTime < a.DateTime || b.DateTime > a.Expires {
			continue
		}
		if old, ok := best[b.Auction]; !ok || b.beats(&old) {
			best[b.Auction] = b
		}
	}
	var rs []q9Row
	for id, b := range best {
		rs = append(rs, q9Row{auctions[id], b})
	}
	return rs
}

// averages is q4's final result over q9's.
func averages(ws []q9Row) []q4Row {
	sums := map[int64]*q4Sum{}
	for _, w := range ws {
		if sums[w.A.Category] == nil {
			sums[w.A.Category] = &q4Sum{}
		}
		s := sums[w.A.Category]
		s.Sum += w.B.Price
		s.N++
	}
	var rs []q4Row
	for cat, s := range sums {
		rs = append(rs, q4Row{cat, float64(s.Sum) / float64(s.N)})
	}
	return rs
}

// baseWinners computes q9 over g's events in one loop and calls f for each
// winner. Events come in time order and auction ids rise, so every 1024
// events the auctions that expired before the current time are done: their
// winners go out and their state is dropped, and a later bid on one (an id
// not above the largest seen, without state) is too late to count.
func baseWinners(g gen.Nexmark, f func(*q9Row)) (int64, error) {
	st := map[int64]*q9State{}
	var top, k int64
	sweep := func(t int64) {
		for id, s := range st {
			if s.Seen && s.Auction.Expires < t {
				if s.HasBest {
					f(&q9Row{s.Auction, s.Best})
				}
				delete(st, id)
			}
		}
	}
	n, err := forEach(g, func(e *gen.NexmarkEvent) {
		if k++; k%1024 == 0 {
			sweep(e.Time())
		}
		if e.Kind == gen.PersonKind {
			return
		}
		id := e.Auction.ID
		if e.Kind == gen.BidKind {
			id = e.Bid.Auction
		}
		s := st[id]
		if s == nil {
			if e.Kind == gen.BidKind && id <= top {
				return
			}
			s = &q9State{}
			st[id] = s
			top = max(top, id)
		}
		if e.Kind == gen.BidKind {
			b := toBidRow(&e.Bid)
			s.bid(&b)
		} else {
			s.auction(&e.Auction)
		}
	})
	sweep(math.MaxInt64)
	return n, err
}
