package nexmark

import (
	"slices"

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

// auction makes a the state's auction, unless it has one: then a is a
// repeat and is ignored. The bids that came before it are offered.
func (s *q9State) auction(a *gen.Auction) bool {
	if s.Seen {
		return false
	}
	s.Auction, s.Seen = *a, true
	for i := range s.Early {
		s.offer(&s.Early[i])
	}
	s.Early = nil
	return true
}

// bid offers b, or keeps it until the auction comes.
func (s *q9State) bid(b *bidRow) {
	if s.Seen {
		s.offer(b)
	} else {
		s.Early = append(s.Early, *b)
	}
}

// winners is q9's result: a CoProcess keyed by auction id keeps each
// auction's best bid and emits it when the watermark passes the auction's
// expiry (a timer). A bid that comes before its auction waits for it,
// until the watermark passes the bid's time (another timer): an auction
// that comes after that is late, and the bid is dropped.
func winners(ev weir.Stream[gen.NexmarkEvent]) weir.Stream[q9Row] {
	timed := timedEvents(ev)
	auctions := weir.MapRef(weir.FilterRef(timed, func(e *gen.NexmarkEvent) bool { return e.Kind == gen.AuctionKind },
		weir.Name("q9-auctions"), weir.Stateless()), func(e *gen.NexmarkEvent) gen.Auction { return e.Auction },
		weir.Name("q9-auction"), weir.Stateless())
	bs := weir.MapRef(bids(timed), func(e *gen.NexmarkEvent) bidRow { return toBidRow(&e.Bid) }, weir.Name("q9-bid"), weir.Stateless())
	type ctx = weir.ProcessContext[int64, q9State, q9Row]
	return weir.CoProcess(
		weir.KeyBy(auctions, func(a gen.Auction) int64 { return a.ID }, weir.Name("auction")),
		weir.KeyBy(bs, func(b bidRow) int64 { return b.Auction }, weir.Name("auction")),
		weir.CoProcessFunc[int64, gen.Auction, bidRow, q9State, q9Row]{
			OnLeft: func(c *ctx, a gen.Auction) {
				if c.State().auction(&a) {
					c.RegisterEventTimer(a.Expires)
				}
			},
			OnRight: func(c *ctx, b bidRow) {
				s := c.State()
				if !s.Seen {
					c.RegisterEventTimer(b.DateTime)
				}
				s.bid(&b)
			},
			OnTimer: func(c *ctx, t weir.Timer) {
				s := c.State()
				switch {
				case s.Seen && t.Time >= s.Auction.Expires:
					if s.HasBest {
						c.Emit(q9Row{s.Auction, s.Best})
					}
					c.ClearState()
				case !s.Seen:
					s.Early = slices.DeleteFunc(s.Early, func(b bidRow) bool { return b.DateTime <= t.Time })
					if len(s.Early) == 0 {
						c.ClearState()
					}
				}
			},
		}, weir.Name("q9-winner"))
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
