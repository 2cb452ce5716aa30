package nexmark

import (
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// q9 finds each auction's winning bid: among the bids on it made between
// its opening and its expiry (both included), the highest, the earliest
// on a tie (then the lowest bidder, then the least extra, so that the
// winner is one row whatever the order of arrival). An auction without
// such a bid has no row. q4 averages the winning prices per category.

// bidRow is a bid with the columns results show.
type bidRow struct {
	Auction, Bidder, Price, DateTime int64
	Extra                            string
}

func toBidRow(b *gen.Bid) bidRow {
	return bidRow{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, DateTime: b.DateTime, Extra: b.Extra}
}

// beats reports whether bid a wins over bid b.
func (a *bidRow) beats(b *bidRow) bool {
	switch {
	case a.Price != b.Price:
		return a.Price > b.Price
	case a.DateTime != b.DateTime:
		return a.DateTime < b.DateTime
	case a.Bidder != b.Bidder:
		return a.Bidder < b.Bidder
	}
	return a.Extra < b.Extra
}

// during reports whether bid b is made during auction a's lifetime.
func during(a *gen.Auction, b *bidRow) bool {
	return a.DateTime <= b.DateTime && b.DateTime <= a.Expires
}

// q9In is an auction or (IsBid) a bid on one, keyed by the auction id.
type q9In struct {
	IsBid   bool
	Auction gen.Auction
	Bid     bidRow
}

func q9Input(e *gen.NexmarkEvent) q9In {
	if e.Kind == gen.BidKind {
		return q9In{IsBid: true, Bid: toBidRow(&e.Bid)}
	}
	return q9In{Auction: e.Auction}
}

func (v *q9In) id() int64 {
	if v.IsBid {
		return v.Bid.Auction
	}
	return v.Auction.ID
}

// q9State is one auction id's: the auction once seen, its best bid so far
// and the bids that came before it.
type q9State struct {
	Auction gen.Auction
	Seen    bool
	Best    bidRow
	HasBest bool
	Early   []bidRow
}

// offer makes b the best bid if it is during the auction and beats the
// best so far, and reports whether it did.
func (s *q9State) offer(b *bidRow) bool {
	if !during(&s.Auction, b) || (s.HasBest && !b.beats(&s.Best)) {
		return false
	}
	s.Best, s.HasBest = *b, true
	return true
}

// add adds v to s and reports whether the best bid changed. The first
// auction of an id counts; a repeated one is ignored.
func (s *q9State) add(v *q9In) bool {
	if v.IsBid {
		if !s.Seen {
			s.Early = append(s.Early, v.Bid)
			return false
		}
		return s.offer(&v.Bid)
	}
	if s.Seen {
		return false
	}
	s.Auction, s.Seen = v.Auction, true
	changed := false
	for i := range s.Early {
		changed = s.offer(&s.Early[i]) || changed
	}
	s.Early = nil
	return changed
}

// winners is q9's result as a stream: each auction's best bid so far as
// it improves, reduced to the last (the best) per auction at the end of
// the input.
func winners(ev weir.Stream[gen.NexmarkEvent]) weir.Stream[q9Row] {
	kept := weir.FilterRef(ev, func(e *gen.NexmarkEvent) bool { return e.Kind != gen.PersonKind }, weir.Name("q9-filter"), weir.Stateless())
	in := weir.MapRef(kept, q9Input, weir.Name("q9-select"), weir.Stateless())
	keyed := weir.KeyBy(in, func(v q9In) int64 { return v.id() }, weir.Name("auction"))
	better := weir.Process(keyed, func(_ int64, s *q9State, v q9In, out []q9Row) []q9Row {
		if s.add(&v) {
			out = append(out, q9Row{s.Auction, s.Best})
		}
		return out
	}, weir.Name("q9-best"))
	final := weir.Reduce(weir.Window(weir.KeyBy(better, func(r q9Row) int64 { return r.A.ID }), weir.Global(),
		weir.WindowOptions(weir.Name("q9-final"))), func(a, b q9Row) q9Row {
		if b.B.beats(&a.B) {
			return b
		}
		return a
	})
	return weir.MapRef(final, func(r *weir.WindowResult[int64, q9Row]) q9Row { return r.Value }, weir.Name("q9"), weir.Stateless())
}

// q9Row is an auction with its winning bid.
type q9Row struct {
	A gen.Auction
	B bidRow
}

func (r *q9Row) csv(l line) line {
	a, b := &r.A, &r.B
	l = l.int(a.ID).str(a.ItemName).str(a.Description).int(a.InitialBid).int(a.Reserve).int(a.DateTime).int(a.Expires).int(a.Seller).int(a.Category).str(a.Extra)
	return l.int(b.Auction).int(b.Bidder).int(b.Price).int(b.DateTime).str(b.Extra)
}

func (r *q9Row) hash() uint64 {
	a, b := &r.A, &r.B
	h := newHasher().int(a.ID).str(a.ItemName).str(a.Description).int(a.InitialBid).int(a.Reserve).int(a.DateTime).int(a.Expires).int(a.Seller).int(a.Category).str(a.Extra)
	return h.int(b.Auction).int(b.Bidder).int(b.Price).int(b.DateTime).str(b.Extra).sum()
}

// q4Row is a category's average winning price so far.
type q4Row struct {
	Category int64
	Avg      float64
}

func (r *q4Row) csv(l line) line { return l.int(r.Category).float(r.Avg) }
func (r *q4Row) hash() uint64 {
	return newHasher().int(r.Category).float(r.Avg).sum()
}

// q4Sum is a category's winning prices: their sum and number.
type q4Sum struct{ Sum, N int64 }

func (s *q4Sum) add(price int64, cat int64) q4Row {
	s.Sum += price
	s.N++
	return q4Row{cat, float64(s.Sum) / float64(s.N)}
}

func addQ4(ev weir.Stream[gen.NexmarkEvent], sk Sinks) {
	byCat := weir.KeyBy(winners(ev), func(r q9Row) int64 { return r.A.Category }, weir.Name("category"))
	avg := weir.Process(byCat, func(cat int64, s *q4Sum, r q9Row, out []q4Row) []q4Row {
		return append(out, s.add(r.B.Price, cat))
	}, weir.Name("q4-avg"), weir.Selectivity(weir.ExactlyOne))
	emit(avg, sk, func(r *q4Row) int64 { return r.Category })
}
