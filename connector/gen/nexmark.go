package gen

import (
	"strconv"
	"time"

	"github.com/weirstream/weir"
)

// Nexmark generates the events of the Nexmark benchmark, an online auction:
// people register, open auctions and bid on them.
//
// As in the reference generator (Apache Beam's, also used by Flink), event
// number n is a person when n mod 50 is 0, an auction when it is 1, 2 or 3,
// and a bid otherwise: exactly 1 person, 3 auctions and 46 bids in every 50
// consecutive events. Ids follow from the event number: person ids and
// auction ids are consecutive from 1000 in the order the events are
// generated. Sellers and bidders are existing people and bids go to existing
// auctions, skewed toward the recent as in the reference: 3/4 of the
// auctions are sold by one hot seller per 100 people (the first of the
// latest hundred), 1/2 of the bids go to the first of the latest hundred
// auctions and 3/4 of them come from one hot bidder; the others choose
// uniformly among the latest 1000 people or the latest 100 auctions. Half
// the bids come from one of 4 hot channels, the others from one of 10,000.
// Prices are 100·10^(6u) for u uniform in [0, 1), categories are 10..14,
// and auctions expire after a uniform length whose mean is the time 100
// auctions take to be generated.
//
// Relative to the reference it simplifies the following: there are no
// "lead" ids (the reference sometimes names people and auctions up to 10
// ids ahead of the last generated one, that is not yet existing); a hot
// bidder is never a person not yet generated (the reference may name the
// second of a hundred before it exists); events are never out of order;
// the parameters (proportions, hot ratios, active people, in-flight
// auctions, average sizes) are fixed at the reference defaults; and strings
// (names, e-mails, credit cards, item names, descriptions, channels, URLs
// and the Extra padding, whose lengths follow the reference's average sizes
// of 200, 500 and 100 bytes) are drawn from fixed pools or are substrings
// of a fixed random text, so generation allocates nothing. The random
// numbers differ from the reference, so the data do too.
//
// Splitting, pacing and event times follow the same rules as YSB: the
// event time of an event is its DateTime.
type Nexmark struct {
	// Events is the total number of events across all instances; 0 is
	// unbounded.
	Events int64
	// Rate is the total number of events per second across all instances;
	// 0 emits as fast as possible.
	Rate float64
	// Seed determines the event sequence.
	Seed uint64
	// BatchSize is the most events one Read returns (default 1024).
	BatchSize int
	// Duration stops each instance this long after its first Read; 0 is
	// unbounded.
	Duration time.Duration
	// StartTime and EventTimeRate give the synthetic event times when Rate
	// is 0, as for YSB (defaults: the wall clock at Open, and 1,000,000
	// events per second).
	StartTime     int64
	EventTimeRate float64
}

// NexmarkKind says which of a NexmarkEvent's fields is set.
type NexmarkKind uint8

// The kinds of Nexmark events.
const (
	PersonKind NexmarkKind = iota
	AuctionKind
	BidKind
)

// String returns "person", "auction" or "bid".
func (k NexmarkKind) String() string {
	switch k {
	case PersonKind:
		return "person"
	case AuctionKind:
		return "auction"
	case BidKind:
		return "bid"
	}
	return "NexmarkKind(" + strconv.Itoa(int(k)) + ")"
}

// NexmarkEvent is one Nexmark event: the field matching Kind is set, the
// other two are zero.
type NexmarkEvent struct {
	Kind    NexmarkKind
	Person  Person
	Auction Auction
	Bid     Bid
}

// Time returns the event time (the DateTime of the set field), in ms.
func (e *NexmarkEvent) Time() int64 {
	switch e.Kind {
	case PersonKind:
		return e.Person.DateTime
	case AuctionKind:
		return e.Auction.DateTime
	}
	return e.Bid.DateTime
}

// Person is a person registering.
type Person struct {
	ID                                   int64
	Name, Email, CreditCard, City, State string
	DateTime                             int64 // ms since the Unix epoch
	Extra                                string
}

// Auction is a person opening an auction. Seller is a Person ID.
type Auction struct {
	ID                                                       int64
	ItemName, Description                                    string
	InitialBid, Reserve, DateTime, Expires, Seller, Category int64
	Extra                                                    string
}

// Bid is a person bidding on an auction. Auction is an Auction ID and
// Bidder a Person ID.
type Bid struct {
	Auction, Bidder, Price int64
	Channel, URL           string
	DateTime               int64 // ms since the Unix epoch
	Extra                  string
}

// Open implements weir.Input.
func (x Nexmark) Open(ctx weir.SourceContext) (weir.Reader[NexmarkEvent], error) {
	t := timing{
		events: x.Events, rate: x.Rate, duration: x.Duration,
		startTime: x.StartTime, eventTimeRate: x.EventTimeRate, batchSize: x.BatchSize,
	}
	s, err := newSchedule("gen.Nexmark", ctx, t)
	if err != nil {
		return nil, err
	}
	s.identify(kindNexmark, t, x.Seed)
	g := newNexmarkGen(x.Seed, s.totalRate())
	return newReader(s, func(s *schedule, b []NexmarkEvent) {
		for i := range b {
			seq := s.seqAt(i)
			b[i] = g.event(seq, s.eventTime(seq))
		}
	}), nil
}
