package ysb

import (
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// WindowMillis is the size of the YSB window.
const WindowMillis = 10_000

// Campaigns maps ad ids to campaign ids.
type Campaigns map[string]string

// FromAds makes a Campaigns map from a generator's ad table.
func FromAds(ads []gen.AdCampaign) Campaigns {
	c := make(Campaigns, len(ads))
	for _, a := range ads {
		c[a.AdID] = a.CampaignID
	}
	return c
}

// View is a view event projected to what the window needs.
type View struct {
	Campaign  string
	EventTime int64
}

// Result is one output row.
type Result = weir.WindowResult[string, int64]

// Query adds the YSB query to a stream of events: keep views, join the
// campaign, event time from event_time with maxDelay of disorder, count per
// campaign per 10 s tumbling window. An event whose ad has no campaign is
// dropped here; the file job rejects such events at decoding.
//
// Event time is assigned after the filter: the watermark then follows the
// views, which are all the window sees. The functions read events through
// pointers (FilterRef, MapRef), since an event is 15 words.
func Query(events weir.Stream[gen.YSBEvent], c Campaigns, maxDelay time.Duration) weir.Stream[Result] {
	return query(events, func(e *gen.YSBEvent) View { return View{Campaign: c[e.AdID], EventTime: e.EventTime} }, maxDelay)
}

// QueryJoin is Query with the campaign of an ad from campaign ("" for
// none), such as a lookup in an external store with a local cache. It
// must be safe for concurrent use.
func QueryJoin(events weir.Stream[gen.YSBEvent], campaign func(ad string) string, maxDelay time.Duration) weir.Stream[Result] {
	return query(events, func(e *gen.YSBEvent) View { return View{Campaign: campaign(e.AdID), EventTime: e.EventTime} }, maxDelay)
}

func query(events weir.Stream[gen.YSBEvent], join func(e *gen.YSBEvent) View, maxDelay time.Duration) weir.Stream[Result] {
	views := weir.FilterRef(events, func(e *gen.YSBEvent) bool { return e.EventType == "view" }, weir.Name("filter(view)"), weir.Stateless())
	proj := weir.MapRef(views, join, weir.Name("map(campaign)"), weir.Stateless())
	known := weir.Filter(proj, func(v View) bool { return v.Campaign != "" }, weir.Name("filter(known)"), weir.Stateless())
	timed := weir.EventTime(known, func(v View) int64 { return v.EventTime }, maxDelay, weir.Name("eventtime"))
	keyed := weir.KeyBy(timed, func(v View) string { return v.Campaign })
	return weir.Count(weir.Window(keyed, weir.Tumbling(WindowMillis*time.Millisecond),
		weir.WindowOptions(weir.Name("window(10s)"))))
}
