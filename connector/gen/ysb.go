package gen

import (
	"strconv"
	"sync"
	"time"

	"github.com/weirstream/weir"
)

// YSB generates the ad events of the Yahoo Streaming Benchmark: users view,
// click on or buy from ads, each ad belonging to one campaign (see Ads).
//
// The event type is uniform over "view", "click" and "purchase"; the ad type
// over "banner", "modal", "sponsored-search", "mail" and "mobile"; the ad
// over the Ads table; user_id, page_id and ip_address are
// uniform over fixed pools of 10,000 values each, built once per process, so
// generating an event allocates nothing.
type YSB struct {
	// Campaigns is the number of campaigns (default 100) and AdsPerCampaign
	// the number of ads of each (default 10).
	Campaigns, AdsPerCampaign int
	// Rate is the total number of events per second across all instances;
	// each instance emits Rate/Parallelism. 0 emits as fast as possible.
	Rate float64
	// Events is the total number of events across all instances; 0 is
	// unbounded.
	Events int64
	// Duration stops each instance this long after its first Read; 0 is
	// unbounded.
	Duration time.Duration
	// Seed determines the ads table and the event sequence.
	Seed uint64
	// BatchSize is the most events one Read returns (default 1024).
	BatchSize int
	// StartTime is the event time, in ms since the Unix epoch, of the first
	// event when Rate is 0 (default: the wall clock at Open, which differs
	// a little between instances; set it for reproducible data).
	StartTime int64
	// EventTimeRate is the number of events per second of event time when
	// Rate is 0 (default 1,000,000): event seq has the time
	// StartTime + seq*1000/EventTimeRate ms.
	EventTimeRate float64
}

// AdCampaign is one row of the YSB ads table: an ad and its campaign.
type AdCampaign struct {
	AdID, CampaignID string
}

var (
	ysbEventTypes = []string{"view", "click", "purchase"}
	ysbAdTypes    = []string{"banner", "modal", "sponsored-search", "mail", "mobile"}
)

const (
	ysbPoolSize = 10_000
	// YSBEventsStart is the event time, in ms, of the first event of
	// YSBEvents.
	YSBEventsStart = 1_700_000_000_000
)

// ysbPools are the user, page and IP address pools, the same for every
// seed.
var ysbPools = sync.OnceValue(func() (p struct{ users, pages, ips []string }) {
	key := streamKey(0, domainPools)
	p.users = uuidPool(key, ysbPoolSize)
	p.pages = uuidPool(key+1, ysbPoolSize)
	p.ips = pool(ysbPoolSize, 15, func(dst []byte, i int) []byte {
		r := newStream(key+2, uint64(i))
		for j := range 4 {
			if j > 0 {
				dst = append(dst, '.')
			}
			dst = strconv.AppendInt(dst, int64(1+r.intn(254)), 10)
		}
		return dst
	})
	return p
})

func (y YSB) dims() (campaigns, adsPer int) {
	campaigns, adsPer = y.Campaigns, y.AdsPerCampaign
	if campaigns <= 0 {
		campaigns = 100
	}
	if adsPer <= 0 {
		adsPer = 10
	}
	return campaigns, adsPer
}

// Ads returns the ads table: Campaigns×AdsPerCampaign ads, ad i belonging to
// campaign i/AdsPerCampaign. The ids are UUIDs determined by Seed.
func (y YSB) Ads() []AdCampaign {
	c, a := y.dims()
	ids := uuidPool(streamKey(y.Seed, domainYSBAds), c+c*a)
	campaigns, ads := ids[:c], ids[c:]
	out := make([]AdCampaign, len(ads))
	for i, ad := range ads {
		out[i] = AdCampaign{AdID: ad, CampaignID: campaigns[i/a]}
	}
	return out
}

// ysbGen makes event seq of a seed.
type ysbGen struct {
	key               uint64
	ads               []AdCampaign
	users, pages, ips []string
}

func newYSBGen(seed uint64, ads []AdCampaign) *ysbGen {
	p := ysbPools()
	return &ysbGen{key: streamKey(seed, domainYSB), ads: ads, users: p.users, pages: p.pages, ips: p.ips}
}

func (g *ysbGen) event(seq uint64, t int64) YSBEvent {
	r := newStream(g.key, seq)
	user := pick(&r, g.users)
	page := pick(&r, g.pages)
	ad := g.ads[r.intn(len(g.ads))].AdID
	adType := pick(&r, ysbAdTypes)
	eventType := pick(&r, ysbEventTypes)
	ip := pick(&r, g.ips)
	return YSBEvent{UserID: user, PageID: page, AdID: ad, AdType: adType, EventType: eventType, EventTime: t, IPAddress: ip}
}

// Open implements weir.Input.
func (y YSB) Open(ctx weir.SourceContext) (weir.Reader[YSBEvent], error) {
	t := timing{
		events: y.Events, rate: y.Rate, duration: y.Duration,
		startTime: y.StartTime, eventTimeRate: y.EventTimeRate, batchSize: y.BatchSize,
	}
	s, err := newSchedule("gen.YSB", ctx, t)
	if err != nil {
		return nil, err
	}
	c, a := y.dims()
	s.identify(kindYSB, t, y.Seed, uint64(c), uint64(a))
	g := newYSBGen(y.Seed, y.Ads())
	return newReader(s, func(s *schedule, b []YSBEvent) {
		for i := range b {
			seq := s.seqAt(i)
			b[i] = g.event(seq, s.eventTime(seq))
		}
	}), nil
}

// YSBEvents generates n events of seed in memory, with the distribution of
// YSB{Seed: seed} and synthetic event times at 1,000,000 events per second
// from YSBEventsStart: they are the events a single-instance
// YSB{Seed: seed, Events: n, StartTime: YSBEventsStart} reads. It also
// returns the ads table. The strings come from pools, so the only
// allocation proportional to n is the slice.
func YSBEvents(n int, seed uint64) ([]YSBEvent, []AdCampaign) {
	ads := YSB{Seed: seed}.Ads()
	g := newYSBGen(seed, ads)
	events := make([]YSBEvent, n)
	for i := range events {
		seq := uint64(i)
		events[i] = g.event(seq, syntheticTime(YSBEventsStart, defaultEventTimeRate, seq))
	}
	return events, ads
}
