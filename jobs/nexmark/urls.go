package nexmark

import (
	"regexp"
	"strings"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// q21 gives bids a channel id: the hot channels' own (apple 0, google 1,
// facebook 2, baidu 3, any case), else the URL's channel_id parameter
// (REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2)); a bid with neither
// has no row. q22 splits the URL at '/' and keeps its 4th to 6th parts
// (SPLIT_INDEX(url, '/', 3..5)), empty where the URL has fewer.

func init() {
	register("q21", &query{
		header: "auction,bidder,price,channel,channel_id", cols: cols("iiiss"),
		add: func(ev weir.Stream[gen.NexmarkEvent], sk Sinks) {
			kept := weir.FilterRef(ev, func(e *gen.NexmarkEvent) bool {
				_, ok := channelID(&e.Bid)
				return e.Kind == gen.BidKind && ok
			}, weir.Name("q21-filter"), weir.Stateless())
			emit(weir.MapRef(kept, func(e *gen.NexmarkEvent) q21Row { return toQ21(&e.Bid) }, weir.Name("q21"), weir.Stateless()), sk, nil)
		},
		ref: func(evs []gen.NexmarkEvent) []string {
			re := regexp.MustCompile(`(&|^)channel_id=([^&]*)`)
			hot := map[string]string{"apple": "0", "google": "1", "facebook": "2", "baidu": "3"}
			var rs []q21Row
			for _, e := range evs {
				b := e.Bid
				if e.Kind != gen.BidKind {
					continue
				}
				id, ok := hot[strings.ToLower(b.Channel)]
				if m := re.FindStringSubmatch(b.URL); !ok && m != nil {
					id, ok = m[2], true
				}
				if ok {
					rs = append(rs, q21Row{b.Auction, b.Bidder, b.Price, b.Channel, id})
				}
			}
			return rowsOf(rs)
		},
		base: func(g gen.Nexmark) (c Checksum, n int64, err error) {
			n, err = forEach(g, func(e *gen.NexmarkEvent) {
				if e.Kind == gen.BidKind {
					if id, ok := channelID(&e.Bid); ok {
						r := q21Row{e.Bid.Auction, e.Bid.Bidder, e.Bid.Price, e.Bid.Channel, id}
						c.add(r.hash())
					}
				}
			})
			return c, n, err
		},
	})
	register("q22", &query{
		header: "auction,bidder,price,channel,dir1,dir2,dir3", cols: cols("iiissss"),
		add: func(ev weir.Stream[gen.NexmarkEvent], sk Sinks) {
			emit(weir.MapRef(bids(ev), func(e *gen.NexmarkEvent) q22Row { return toQ22(&e.Bid) }, weir.Name("q22"), weir.Stateless()), sk, nil)
		},
		ref: func(evs []gen.NexmarkEvent) []string {
			var rs []q22Row
			for _, e := range evs {
				if b := e.Bid; e.Kind == gen.BidKind {
					parts := append(strings.Split(b.URL, "/"), "", "", "", "", "", "")
					rs = append(rs, q22Row{b.Auction, b.Bidder, b.Price, b.Channel, parts[3], parts[4], parts[5]})
				}
			}
			return rowsOf(rs)
		},
		base: func(g gen.Nexmark) (c Checksum, n int64, err error) {
			n, err = forEach(g, func(e *gen.NexmarkEvent) {
				if e.Kind == gen.BidKind {
					r := toQ22(&e.Bid)
					c.add(r.hash())
				}
			})
			return c, n, err
		},
	})
}

// channelID is q21's channel id of bid b, and whether it has one.
func channelID(b *gen.Bid) (string, bool) {
	for i, name := range [...]string{"apple", "google", "facebook", "baidu"} {
		if strings.EqualFold(b.Channel, name) {
			return "0123"[i : i+1], true
		}
	}
	const param = "channel_id="
	for at := 0; at+len(param) <= len(b.URL); at++ {
		switch {
		case at == 0 && strings.HasPrefix(b.URL, param):
		case b.URL[at] == '&' && strings.HasPrefix(b.URL[at+1:], param):
			at++
		default:
			continue
		}
		v := b.URL[at+len(param):]
		if end := strings.IndexByte(v, '&'); end >= 0 {
			v = v[:end]
		}
		return v, true
	}
	return "", false
}

type q21Row struct {
	Auction, Bidder, Price int64
	Channel, ChannelID     string
}

func toQ21(b *gen.Bid) q21Row {
	id, _ := channelID(b)
	return q21Row{b.Auction, b.Bidder, b.Price, b.Channel, id}
}

func (r *q21Row) csv(l line) line {
	return l.int(r.Auction).int(r.Bidder).int(r.Price).str(r.Channel).str(r.ChannelID)
}

func (r *q21Row) hash() uint64 {
	return newHasher().int(r.Auction).int(r.Bidder).int(r.Price).str(r.Channel).str(r.ChannelID).sum()
}

type q22Row struct {
	Auction, Bidder, Price    int64
	Channel, Dir1, Dir2, Dir3 string
}

// toQ22 cuts b's URL at its slashes without allocating.
func toQ22(b *gen.Bid) q22Row {
	r := q22Row{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel}
	rest := b.URL
	for i := 0; i < 6; i++ {
		part, after, found := strings.Cut(rest, "/")
		switch i {
		case 3:
			r.Dir1 = part
		case 4:
			r.Dir2 = part
		case 5:
			r.Dir3 = part
		}
		if !found {
			break
		}
		rest = after
	}
	return r
}

func (r *q22Row) csv(l line) line {
	return l.int(r.Auction).int(r.Bidder).int(r.Price).str(r.Channel).str(r.Dir1).str(r.Dir2).str(r.Dir3)
}

func (r *q22Row) hash() uint64 {
	return newHasher().int(r.Auction).int(r.Bidder).int(r.Price).str(r.Channel).str(r.Dir1).str(r.Dir2).str(r.Dir3).sum()
}
