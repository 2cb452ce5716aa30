package nexmark

import (
	"strings"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// q14, q21 and q22 read bids one at a time, as q0–q2 do: a filter with
// computed columns, the channel id out of the URL, and the URL's first
// three directories.

func init() {
	register("q14", &query{
		header: "auction,bidder,price,bidTimeType,dateTime,extra,c_counts", cols: cols("iimsisi"),
		add: func(ev weir.Stream[gen.NexmarkEvent], sk Sinks) {
			kept := weir.FilterRef(ev, func(e *gen.NexmarkEvent) bool { return e.Kind == gen.BidKind && q14Keep(e.Bid.Price) }, weir.Name("q14-filter"), weir.Stateless())
			emit(weir.MapRef(kept, func(e *gen.NexmarkEvent) q14Row { return toQ14(&e.Bid) }, weir.Name("q14"), weir.Stateless()), sk, nil)
		},
		ref: func(evs []gen.NexmarkEvent) []string {
			var rs []q14Row
			for _, e := range evs {
				b := e.Bid
				if e.Kind != gen.BidKind || b.Price*908 <= 1_000_000_000 || b.Price*908 >= 50_000_000_000 {
					continue
				}
				hour := time.UnixMilli(b.DateTime).UTC().Hour()
				kind := "otherTime"
				if hour >= 8 && hour <= 18 {
					kind = "dayTime"
				} else if hour <= 6 || hour >= 20 {
					kind = "nightTime"
				}
				rs = append(rs, q14Row{b.Auction, b.Bidder, b.Price * 908, kind, b.DateTime, b.Extra, int64(strings.Count(b.Extra, "c"))})
			}
			return rowsOf(rs)
		},
		base: func(g gen.Nexmark) (c Checksum, n int64, err error) {
			n, err = forEach(g, func(e *gen.NexmarkEvent) {
				if e.Kind == gen.BidKind && q14Keep(e.Bid.Price) {
					r := toQ14(&e.Bid)
					c.add(r.hash())
				}
			})
			return c, n, err
		},
	})
}

// q14Keep keeps the bids whose price in euros (× 0.908) lies strictly
// between 1,000,000 and 50,000,000 (cents).
func q14Keep(price int64) bool {
	m := price * 908
	return m > 1_000_000_000 && m < 50_000_000_000
}

type q14Row struct {
	Auction, Bidder, PriceMilli int64
	BidTimeType                 string
	DateTime                    int64
	Extra                       string
	CCounts                     int64
}

func toQ14(b *gen.Bid) q14Row {
	kind := "otherTime"
	h := floorDiv(b.DateTime, 3_600_000) / 3_600_000 % 24 // the hour, UTC
	if h < 0 {
		h += 24
	}
	if h >= 8 && h <= 18 {
		kind = "dayTime"
	} else if h <= 6 || h >= 20 {
		kind = "nightTime"
	}
	n := 0
	for i := 0; i < len(b.Extra); i++ {
		if b.Extra[i] == 'c' {
			n++
		}
	}
	return q14Row{b.Auction, b.Bidder, b.Price * 908, kind, b.DateTime, b.Extra, int64(n)}
}

func (r *q14Row) csv(l line) line {
	return l.int(r.Auction).int(r.Bidder).milli(r.PriceMilli).str(r.BidTimeType).int(r.DateTime).str(r.Extra).int(r.CCounts)
}

func (r *q14Row) hash() uint64 {
	return newHasher().int(r.Auction).int(r.Bidder).int(r.PriceMilli).str(r.BidTimeType).int(r.DateTime).str(r.Extra).int(r.CCounts).sum()
}
