package nexmark

import (
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// q0, q1 and q2 read bids one at a time: pass-through, currency
// conversion and a selection.

func init() {
	register("q0", &query{
		header: "auction,bidder,price,dateTime,extra", cols: cols("iiiis"),
		add: func(ev weir.Stream[gen.NexmarkEvent], sk Sinks) {
			emit(weir.MapRef(bids(ev), func(e *gen.NexmarkEvent) q0Row { return q0Row(toBidRow(&e.Bid)) }, weir.Name("q0"), weir.Stateless()), sk, nil)
		},
		ref: func(evs []gen.NexmarkEvent) []string {
			var rs []q0Row
			for i := range evs {
				if evs[i].Kind == gen.BidKind {
					b := evs[i].Bid
					rs = append(rs, q0Row{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, DateTime: b.DateTime, Extra: b.Extra})
				}
			}
			return rowsOf(rs)
		},
		base: func(g gen.Nexmark) (c Checksum, n int64, err error) {
			n, err = forEach(g, func(e *gen.NexmarkEvent) {
				if e.Kind == gen.BidKind {
					r := q0Row(toBidRow(&e.Bid))
					c.add(r.hash())
				}
			})
			return c, n, err
		},
	})
	register("q1", &query{
		header: "auction,bidder,price,dateTime,extra", cols: cols("iimis"),
		add: func(ev weir.Stream[gen.NexmarkEvent], sk Sinks) {
			emit(weir.MapRef(bids(ev), func(e *gen.NexmarkEvent) q1Row { return toQ1(&e.Bid) }, weir.Name("q1"), weir.Stateless()), sk, nil)
		},
		ref: func(evs []gen.NexmarkEvent) []string {
			var rs []q1Row
			for i := range evs {
				if evs[i].Kind == gen.BidKind {
					b := evs[i].Bid
					rs = append(rs, q1Row{Auction: b.Auction, Bidder: b.Bidder, PriceMilli: b.Price * 908, DateTime: b.DateTime, Extra: b.Extra})
				}
			}
			return rowsOf(rs)
		},
		base: func(g gen.Nexmark) (c Checksum, n int64, err error) {
			n, err = forEach(g, func(e *gen.NexmarkEvent) {
				if e.Kind == gen.BidKind {
					r := toQ1(&e.Bid)
					c.add(r.hash())
				}
			})
			return c, n, err
		},
	})
	register("q2", &query{
		header: "auction,price", cols: cols("ii"),
		add: func(ev weir.Stream[gen.NexmarkEvent], sk Sinks) {
			kept := weir.FilterRef(ev, q2Keep, weir.Name("q2-filter"), weir.Stateless())
			emit(weir.MapRef(kept, func(e *gen.NexmarkEvent) q2Row { return q2Row{e.Bid.Auction, e.Bid.Price} }, weir.Name("q2"), weir.Stateless()), sk, nil)
		},
		ref: func(evs []gen.NexmarkEvent) []string {
			var rs []q2Row
			for _, e := range evs {
				if e.Kind == gen.BidKind && e.Bid.Auction%123 == 0 {
					rs = append(rs, q2Row{e.Bid.Auction, e.Bid.Price})
				}
			}
			return rowsOf(rs)
		},
		base: func(g gen.Nexmark) (c Checksum, n int64, err error) {
			n, err = forEach(g, func(e *gen.NexmarkEvent) {
				if q2Keep(e) {
					r := q2Row{e.Bid.Auction, e.Bid.Price}
					c.add(r.hash())
				}
			})
			return c, n, err
		},
	})
}

// bids keeps the bid events.
func bids(ev weir.Stream[gen.NexmarkEvent]) weir.Stream[gen.NexmarkEvent] {
	return weir.FilterRef(ev, func(e *gen.NexmarkEvent) bool { return e.Kind == gen.BidKind }, weir.Name("bids"), weir.Stateless())
}

func q2Keep(e *gen.NexmarkEvent) bool { return e.Kind == gen.BidKind && e.Bid.Auction%123 == 0 }

// q0Row is a bid, written as auction,bidder,price,dateTime,extra.
type q0Row bidRow

func (r *q0Row) csv(l line) line {
	return l.int(r.Auction).int(r.Bidder).int(r.Price).int(r.DateTime).str(r.Extra)
}

func (r *q0Row) hash() uint64 {
	return newHasher().int(r.Auction).int(r.Bidder).int(r.Price).int(r.DateTime).str(r.Extra).sum()
}

// q1Row is a bid with its price in euros: price × 0.908, exactly, kept in
// thousandths of a cent.
type q1Row struct {
	Auction, Bidder, PriceMilli, DateTime int64
	Extra                                 string
}

func toQ1(b *gen.Bid) q1Row {
	return q1Row{Auction: b.Auction, Bidder: b.Bidder, PriceMilli: b.Price * 908, DateTime: b.DateTime, Extra: b.Extra}
}

func (r *q1Row) csv(l line) line {
	return l.int(r.Auction).int(r.Bidder).milli(r.PriceMilli).int(r.DateTime).str(r.Extra)
}

func (r *q1Row) hash() uint64 {
	return newHasher().int(r.Auction).int(r.Bidder).int(r.PriceMilli).int(r.DateTime).str(r.Extra).sum()
}

type q2Row struct{ Auction, Price int64 }

func (r *q2Row) csv(l line) line { return l.int(r.Auction).int(r.Price) }
func (r *q2Row) hash() uint64    { return newHasher().int(r.Auction).int(r.Price).sum() }
