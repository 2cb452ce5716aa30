package nexmark_test

import (
	"slices"
	"testing"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/nexmark"
)

// Bids at the edges of q14's hours and q17's days (before 1970 too), q21's URLs and
// channels and q22's paths: the engine's rows equal the reference's, and
// the reference's are the ones written here.
func TestBidEdges(t *testing.T) {
	const hour = 3_600_000
	urls := []string{
		"channel_id=5", "https://a/b/c/d?q=1&channel_id=x9&y=2", "x?channel_id=7", "q&channel_id=", "a/b/c",
		"", "https://www.nexmark.com/p/q/r/item.htm", `x/y/z/a,b/"c"/d`, "&channel_id=1&channel_id=2",
	}
	channels := []string{"APPLE", "google", "Baidu", "faceBook", "channel-7", ""}
	times := []int64{0, 7*hour - 1, 7 * hour, 8 * hour, 19*hour - 1, 19 * hour, 20*hour - 1, 20 * hour, -1, -4*hour - 1, -5 * hour}
	var evs []gen.NexmarkEvent
	for i, ts := range times {
		for j, u := range urls {
			b := gen.Bid{Auction: int64(1000 + i), Bidder: int64(j), Price: 1_200_000 + int64(i*j), Channel: channels[(i+j)%len(channels)], URL: u, DateTime: ts, Extra: "cabc"}
			evs = append(evs, gen.NexmarkEvent{Kind: gen.BidKind, Bid: b})
		}
	}
	want := map[string][]string{
		"q14": {"1000,0,1089600,nightTime,0,cabc,2", "1001,0,1089600,nightTime,25199999,cabc,2", "1002,0,1089600,otherTime,25200000,cabc,2",
			"1003,0,1089600,dayTime,28800000,cabc,2", "1004,0,1089600,dayTime,68399999,cabc,2", "1005,0,1089600,otherTime,68400000,cabc,2",
			"1006,0,1089600,otherTime,71999999,cabc,2", "1007,0,1089600,nightTime,72000000,cabc,2", "1008,0,1089600,nightTime,-1,cabc,2",
			"1009,0,1089600,otherTime,-14400001,cabc,2", "1010,0,1089600,otherTime,-18000000,cabc,2"},
		"q21": {"1000,0,1200000,APPLE,0", "1000,1,1200000,google,1", "1000,2,1200000,Baidu,3", "1000,3,1200000,faceBook,2", "1001,3,1200003,channel-7,", "1000,8,1200000,Baidu,3"},
		"q17": {"1008,1969-12-31,9,0,0,9,1200000,1200064,1200032,10800288", "1000,1970-01-01,9,0,0,9,1200000,1200000,1200000,10800000"},
		"q22": {"1000,0,1200000,APPLE,,,", "1000,1,1200000,google,b,c,d?q=1&channel_id=x9&y=2", "1000,4,1200000,channel-7,,,", "1000,6,1200000,APPLE,p,q,r", `1000,7,1200000,google,"a,b","""c""",d`},
	}
	for name, rows := range want {
		ref, err := nexmark.Reference(name, evs)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if !slices.Contains(ref, r) {
				t.Errorf("%s: the reference has no row %q", name, r)
			}
		}
		for _, w := range []int{1, 2} {
			lines, sum := run(t, name, weir.SliceSource[gen.NexmarkEvent]{Records: evs, BatchSize: 7}, weir.Workers(w))
			check(t, name, lines, sum, ref)
		}
	}
}
