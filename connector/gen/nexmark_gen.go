package gen

import (
	"math"
	"strconv"
	"strings"
	"sync"
)

// The reference generator's defaults.
const (
	nxPersonProportion  = 1
	nxAuctionProportion = 3
	nxProportions       = 50 // persons + auctions + 46 bids

	nxFirstPersonID   = 1000
	nxFirstAuctionID  = 1000
	nxFirstCategoryID = 10
	nxCategories      = 5

	nxActivePeople      = 1000
	nxInFlightAuctions  = 100
	nxHotSellersRatio   = 4   // 1 - 1/4 of the auctions have a hot seller
	nxHotAuctionRatio   = 2   // 1 - 1/2 of the bids go to a hot auction
	nxHotBiddersRatio   = 4   // 1 - 1/4 of the bids come from a hot bidder
	nxHotBatch          = 100 // one hot person or auction per this many
	nxHotChannelsRatio  = 2   // 1 - 1/2 of the bids come from a hot channel
	nxChannels          = 10_000
	nxAvgPersonBytes    = 200
	nxAvgAuctionBytes   = 500
	nxAvgBidBytes       = 100
	nxPoolSize          = 1000
	nxTextBytes         = 1 << 16
	nxMaxItemName       = 20
	nxMaxDescription    = 100
	nxMinStringLength   = 3
	nxAuctionLengthBase = nxInFlightAuctions * nxProportions / nxAuctionProportion
)

var (
	nxFirstNames  = strings.Split("Peter,Paul,Luke,John,Saul,Vicky,Kate,Julie,Sarah,Deiter,Walter", ",")
	nxLastNames   = strings.Split("Shultz,Abrams,Spencer,White,Bartels,Walton,Smith,Jones,Noris", ",")
	nxCities      = strings.Split("Phoenix,Los Angeles,San Francisco,Boise,Portland,Bend,Redmond,Seattle,Kent,Cheyenne", ",")
	nxStates      = strings.Split("AZ,CA,ID,OR,WA,WY", ",")
	nxHotChannels = []string{"Google", "Facebook", "Baidu", "Apple"}
)

// nxPools are the string pools, the same for every seed.
type nxPools struct {
	names, emails, cards []string
	channels, urls       []string // the hot ones first
	text                 text
}

var nexmarkPools = sync.OnceValue(func() *nxPools {
	key := streamKey(0, domainPools) + 100
	p := &nxPools{text: newText(key, nxTextBytes)}
	p.names = pool(len(nxFirstNames)*len(nxLastNames), 12, func(dst []byte, i int) []byte {
		dst = append(dst, nxFirstNames[i/len(nxLastNames)]...)
		return append(append(dst, ' '), nxLastNames[i%len(nxLastNames)]...)
	})
	word := func(dst []byte, r *stream, maxLen int, special byte) []byte {
		w := strings.ReplaceAll(p.text.sub(r, nxMinStringLength, maxLen), " ", string(special))
		return append(dst, w...)
	}
	p.emails = pool(nxPoolSize, 16, func(dst []byte, i int) []byte {
		r := newStream(key+1, uint64(i))
		dst = word(dst, &r, 7, '.')
		dst = append(dst, '@')
		dst = word(dst, &r, 5, '.')
		return append(dst, ".com"...)
	})
	p.cards = pool(nxPoolSize, 19, func(dst []byte, i int) []byte {
		r := newStream(key+2, uint64(i))
		for j := range 4 {
			if j > 0 {
				dst = append(dst, ' ')
			}
			dst = append(dst, strconv.Itoa(10000 + r.intn(10000))[1:]...)
		}
		return dst
	})
	n := len(nxHotChannels) + nxChannels
	p.channels = pool(n, 14, func(dst []byte, i int) []byte {
		if i < len(nxHotChannels) {
			return append(dst, nxHotChannels[i]...)
		}
		return strconv.AppendInt(append(dst, "channel-"...), int64(i-len(nxHotChannels)), 10)
	})
	p.urls = pool(n, 64, func(dst []byte, i int) []byte {
		r := newStream(key+3, uint64(i))
		dst = append(dst, "https://www.nexmark.com/"...)
		for range 3 {
			dst = append(word(dst, &r, 5, '_'), '/')
		}
		dst = append(dst, "item.htm?query=1"...)
		if i >= len(nxHotChannels) && r.intn(10) > 0 {
			dst = strconv.AppendInt(append(dst, "&channel_id="...), int64(r.Uint64()>>33), 10)
		}
		return dst
	})
	return p
})

// nexmarkGen makes event seq of a seed.
type nexmarkGen struct {
	key       uint64
	horizonMs int64 // auctions last 1..2·horizonMs ms
	p         *nxPools
}

func newNexmarkGen(seed uint64, eventsPerSecond float64) *nexmarkGen {
	return &nexmarkGen{
		key:       streamKey(seed, domainNexmark),
		horizonMs: int64(nxAuctionLengthBase * 1000 / eventsPerSecond),
		p:         nexmarkPools(),
	}
}

func (g *nexmarkGen) event(seq uint64, t int64) NexmarkEvent {
	r := newStream(g.key, seq)
	id := int64(seq)
	switch off := id % nxProportions; {
	case off < nxPersonProportion:
		return NexmarkEvent{Kind: PersonKind, Person: g.person(&r, id, t)}
	case off < nxPersonProportion+nxAuctionProportion:
		return NexmarkEvent{Kind: AuctionKind, Auction: g.auction(&r, id, t)}
	default:
		return NexmarkEvent{Kind: BidKind, Bid: g.bid(&r, id, t)}
	}
}

func (g *nexmarkGen) person(r *stream, id, t int64) Person {
	p := Person{
		ID:         lastPerson(id) + nxFirstPersonID,
		Name:       pick(r, g.p.names),
		Email:      pick(r, g.p.emails),
		CreditCard: pick(r, g.p.cards),
		City:       pick(r, nxCities),
		State:      pick(r, nxStates),
		DateTime:   t,
	}
	size := 8 + len(p.Name) + len(p.Email) + len(p.CreditCard) + len(p.City) + len(p.State)
	p.Extra = g.extra(r, size, nxAvgPersonBytes)
	return p
}

func (g *nexmarkGen) auction(r *stream, id, t int64) Auction {
	a := Auction{ID: lastAuction(id) + nxFirstAuctionID, DateTime: t}
	if r.intn(nxHotSellersRatio) > 0 {
		a.Seller = lastPerson(id) / nxHotBatch * nxHotBatch
	} else {
		a.Seller = activePerson(r, id)
	}
	a.Seller += nxFirstPersonID
	a.Category = nxFirstCategoryID + int64(r.intn(nxCategories))
	a.InitialBid = price(r)
	a.Expires = t + 1 + int64(r.intn(int(max(2*g.horizonMs, 1))))
	a.ItemName = g.p.text.sub(r, nxMinStringLength, nxMaxItemName)
	a.Description = g.p.text.sub(r, nxMinStringLength, nxMaxDescription)
	a.Reserve = a.InitialBid + price(r)
	a.Extra = g.extra(r, 8+len(a.ItemName)+len(a.Description)+5*8, nxAvgAuctionBytes)
	return a
}

func (g *nexmarkGen) bid(r *stream, id, t int64) Bid {
	b := Bid{DateTime: t}
	if r.intn(nxHotAuctionRatio) > 0 {
		b.Auction = lastAuction(id) / nxHotBatch * nxHotBatch
	} else {
		last := lastAuction(id)
		lo := max(last-nxInFlightAuctions, 0)
		b.Auction = lo + int64(r.intn(int(last-lo+1)))
	}
	b.Auction += nxFirstAuctionID
	if r.intn(nxHotBiddersRatio) > 0 {
		last := lastPerson(id)
		b.Bidder = min(last/nxHotBatch*nxHotBatch+1, last)
	} else {
		b.Bidder = activePerson(r, id)
	}
	b.Bidder += nxFirstPersonID
	b.Price = price(r)
	c := len(nxHotChannels) + r.intn(nxChannels)
	if r.intn(nxHotChannelsRatio) > 0 {
		c = r.intn(len(nxHotChannels))
	}
	b.Channel, b.URL = g.p.channels[c], g.p.urls[c]
	b.Extra = g.extra(r, 4*8, nxAvgBidBytes)
	return b
}

// lastPerson is the base-0 id of the last person generated up to event id.
func lastPerson(id int64) int64 {
	return id / nxProportions * nxPersonProportion
}

// lastAuction is the base-0 id of the last auction generated up to event
// id, or -1 if there is none.
func lastAuction(id int64) int64 {
	epoch, off := id/nxProportions, id%nxProportions
	switch {
	case off < nxPersonProportion:
		return epoch*nxAuctionProportion - 1
	case off < nxPersonProportion+nxAuctionProportion:
		return epoch*nxAuctionProportion + off - nxPersonProportion
	}
	return epoch*nxAuctionProportion + nxAuctionProportion - 1
}

// activePerson is a base-0 person id chosen uniformly among the last
// nxActivePeople generated up to event id.
func activePerson(r *stream, id int64) int64 {
	n := lastPerson(id) + 1
	active := min(n, nxActivePeople)
	return n - active + int64(r.intn(int(active)))
}

// price is 100·10^(6u), u uniform in [0, 1): cents from $1 to $1M,
// log-uniform.
func price(r *stream) int64 {
	return int64(math.Round(math.Pow(10, r.float64()*6) * 100))
}

// extra pads a record of size bytes to about avg bytes on average: its
// length is uniform within ±20% of the difference.
func (g *nexmarkGen) extra(r *stream, size, avg int) string {
	if size >= avg {
		return ""
	}
	want := avg - size
	delta := int(math.Round(float64(want) * 0.2))
	n := want - delta
	if delta > 0 {
		n += r.intn(2 * delta)
	}
	off := r.intn(len(g.p.text) - n + 1)
	return string(g.p.text[off : off+n])
}
