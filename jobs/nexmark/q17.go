package nexmark

import (
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// q17, auction statistics: per auction and UTC day, the number of bids,
// of bids under 10,000, from 10,000 to under 1,000,000 and from 1,000,000
// (prices in cents), and the least, greatest, average and total price.

const day = 24 * 3_600_000 // ms

func init() {
	register("q17", &query{
		header: "auction,day,total_bids,rank1_bids,rank2_bids,rank3_bids,min_price,max_price,avg_price,sum_price",
		cols:   cols("isiiiiiifi"),
		add:    addQ17, ref: refQ17, base: baseQ17,
	})
}

// q17Acc is the statistics of an auction's bids in a day.
type q17Acc struct{ Total, Rank1, Rank2, Rank3, Min, Max, Sum int64 }

func (a q17Acc) add(price int64) q17Acc {
	return a.merge(q17Acc{1, 0, 0, 0, price, price, price}.ranked(price))
}

// ranked counts price in its rank.
func (a q17Acc) ranked(price int64) q17Acc {
	switch {
	case price < 10_000:
		a.Rank1++
	case price < 1_000_000:
		a.Rank2++
	default:
		a.Rank3++
	}
	return a
}

func (a q17Acc) merge(b q17Acc) q17Acc {
	if a.Total == 0 {
		return b
	}
	return q17Acc{a.Total + b.Total, a.Rank1 + b.Rank1, a.Rank2 + b.Rank2, a.Rank3 + b.Rank3, min(a.Min, b.Min), max(a.Max, b.Max), a.Sum + b.Sum}
}

func (a *q17Acc) row(auction, dayStart int64) q17Row {
	return q17Row{auction, time.UnixMilli(dayStart).UTC().Format(time.DateOnly), *a}
}

func addQ17(ev weir.Stream[gen.NexmarkEvent], sk Sinks) {
	p := weir.MapRef(bids(ev), func(e *gen.NexmarkEvent) q17Bid { return q17Bid{e.Bid.Auction, e.Bid.Price, e.Bid.DateTime} }, weir.Name("q17-select"), weir.Stateless())
	timed := weir.EventTime(p, func(b q17Bid) int64 { return b.DateTime }, MaxOutOfOrder, weir.Name("q17-time"))
	stats := weir.Aggregate(weir.Window(weir.KeyBy(timed, func(b q17Bid) int64 { return b.Auction }, weir.Name("auction")),
		weir.Tumbling(day*time.Millisecond), weir.WindowOptions(weir.Name("q17-day"))),
		weir.Aggregator[q17Bid, q17Acc, q17Acc]{
			Add:   func(a q17Acc, b q17Bid) q17Acc { return a.add(b.Price) },
			Merge: q17Acc.merge,
		})
	emit(weir.MapRef(stats, func(r *weir.WindowResult[int64, q17Acc]) q17Row { return r.Value.row(r.Key, r.Start) },
		weir.Name("q17"), weir.Stateless()), sk, nil)
}

type q17Bid struct{ Auction, Price, DateTime int64 }

func refQ17(evs []gen.NexmarkEvent) []string {
	type ad struct {
		auction int64
		day     string
	}
	stats := map[ad]*q17Acc{}
	for _, e := range evs {
		if e.Kind != gen.BidKind {
			continue
		}
		k := ad{e.Bid.Auction, time.UnixMilli(e.Bid.DateTime).UTC().Format("2006-01-02")}
		s := stats[k]
		if s == nil {
			s = &q17Acc{Min: e.Bid.Price, Max: e.Bid.Price}
			stats[k] = s
		}
		p := e.Bid.Price
		s.Total++
		s.Sum += p
		s.Min, s.Max = min(s.Min, p), max(s.Max, p)
		if p < 10_000 {
			s.Rank1++
		} else if p < 1_000_000 {
			s.Rank2++
		} else {
			s.Rank3++
		}
	}
	var rs []q17Row
	for k, s := range stats {
		rs = append(rs, q17Row{k.auction, k.day, *s})
	}
	return rowsOf(rs)
}

// baseQ17 keeps the current day's statistics per auction; bids come in
// time order from the generator.
func baseQ17(g gen.Nexmark) (c Checksum, n int64, err error) {
	stats := map[int64]q17Acc{}
	today := int64(0)
	flush := func() {
		for a, s := range stats {
			r := s.row(a, today)
			c.add(r.hash())
		}
		clear(stats)
	}
	n, err = forEach(g, func(e *gen.NexmarkEvent) {
		if e.Kind != gen.BidKind {
			return
		}
		if d := floorDiv(e.Bid.DateTime, day); d != today {
			flush()
			today = d
		}
		stats[e.Bid.Auction] = stats[e.Bid.Auction].add(e.Bid.Price)
	})
	flush()
	return c, n, err
}

type q17Row struct {
	Auction int64
	Day     string
	S       q17Acc
}

func (r *q17Row) avg() float64 { return float64(r.S.Sum) / float64(r.S.Total) }

func (r *q17Row) csv(l line) line {
	s := &r.S
	return l.int(r.Auction).str(r.Day).int(s.Total).int(s.Rank1).int(s.Rank2).int(s.Rank3).int(s.Min).int(s.Max).float(r.avg()).int(s.Sum)
}

func (r *q17Row) hash() uint64 {
	s := &r.S
	return newHasher().int(r.Auction).str(r.Day).int(s.Total).int(s.Rank1).int(s.Rank2).int(s.Rank3).int(s.Min).int(s.Max).float(r.avg()).int(s.Sum).sum()
}
