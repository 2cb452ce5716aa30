package gen

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestYSBAds(t *testing.T) {
	tests := []struct {
		y                  YSB
		campaigns, perCamp int
	}{
		{YSB{Seed: 1}, 100, 10},
		{YSB{Seed: 2, Campaigns: 3, AdsPerCampaign: 7}, 3, 7},
		{YSB{Seed: 3, Campaigns: 1, AdsPerCampaign: 1}, 1, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.y.Seed), func(t *testing.T) {
			ads := tt.y.Ads()
			if got, want := len(ads), tt.campaigns*tt.perCamp; got != want {
				t.Fatalf("len(Ads()) = %d; want %d", got, want)
			}
			adIDs := map[string]bool{}
			perCampaign := map[string]int{}
			for i, a := range ads {
				if !uuidRE.MatchString(a.AdID) || !uuidRE.MatchString(a.CampaignID) {
					t.Fatalf("ad %d = %+v; want UUIDs", i, a)
				}
				if a.CampaignID != ads[i/tt.perCamp*tt.perCamp].CampaignID {
					t.Errorf("ad %d in campaign %s; want the campaign of ad %d", i, a.CampaignID, i/tt.perCamp*tt.perCamp)
				}
				adIDs[a.AdID] = true
				perCampaign[a.CampaignID]++
			}
			if got, want := len(adIDs), len(ads); got != want {
				t.Errorf("%d distinct ad ids; want %d", got, want)
			}
			if got, want := len(perCampaign), tt.campaigns; got != want {
				t.Errorf("%d distinct campaigns; want %d", got, want)
			}
			for c, n := range perCampaign {
				if n != tt.perCamp || adIDs[c] {
					t.Errorf("campaign %s has %d ads (or is an ad id); want %d", c, n, tt.perCamp)
				}
			}
			if again := tt.y.Ads(); !slices.Equal(again, ads) {
				t.Errorf("Ads() is not deterministic")
			}
			other := tt.y
			other.Seed += 100
			if o := other.Ads(); o[0] == ads[0] {
				t.Errorf("seeds %d and %d give the same ad %v", tt.y.Seed, other.Seed, o[0])
			}
		})
	}
}

func TestYSBDeterministic(t *testing.T) {
	src := YSB{Seed: 7, Events: 5000, StartTime: 1, BatchSize: 100}
	a := readAll(t, src, 1, 3, 100)
	b := readAll(t, src, 1, 3, 100)
	if !slices.Equal(a, b) {
		t.Errorf("two reads of the same seed differ")
	}
	src.Seed = 8
	if c := readAll(t, src, 1, 3, 100); slices.Equal(a, c) {
		t.Errorf("seeds 7 and 8 give the same events")
	}
}

func TestYSBSplit(t *testing.T) {
	for _, tc := range splitCases {
		t.Run(fmt.Sprintf("%d/%d", tc.total, tc.par), func(t *testing.T) {
			checkSplit(t, YSB{Seed: 3, Events: int64(tc.total), StartTime: 1e12, BatchSize: 64}, tc.total, tc.par)
		})
	}
}

func TestYSBEventsMatchesReader(t *testing.T) {
	events, ads := YSBEvents(3000, 9)
	read := readAll(t, YSB{Seed: 9, Events: 3000, StartTime: YSBEventsStart}, 0, 1, 1024)
	if !slices.Equal(events, read) {
		t.Errorf("YSBEvents differs from the reader")
	}
	if !slices.Equal(ads, YSB{Seed: 9}.Ads()) {
		t.Errorf("YSBEvents ads differ from Ads()")
	}
	if got, want := events[2999].EventTime, int64(YSBEventsStart+2); got != want {
		t.Errorf("event 2999 time = %d; want %d", got, want)
	}
}

func TestYSBDistribution(t *testing.T) {
	const n = 300_000
	events, ads := YSBEvents(n, 1)
	adCampaign := map[string]string{}
	for _, a := range ads {
		adCampaign[a.AdID] = a.CampaignID
	}
	eventTypes, adTypes, adsSeen, users := map[string]int{}, map[string]int{}, map[string]int{}, map[string]bool{}
	for _, e := range events {
		eventTypes[e.EventType]++
		adTypes[e.AdType]++
		adsSeen[e.AdID]++
		users[e.UserID] = true
		if _, ok := adCampaign[e.AdID]; !ok {
			t.Fatalf("ad %q is not in the ads table", e.AdID)
		}
	}
	uniform := func(what string, m map[string]int, values []string) {
		t.Helper()
		if len(m) != len(values) {
			t.Errorf("%d %s; want %d", len(m), what, len(values))
		}
		p := 1 / float64(len(values))
		tol := 6 * math.Sqrt(n*p*(1-p))
		for _, v := range values {
			if got, want := float64(m[v]), n*p; math.Abs(got-want) > tol {
				t.Errorf("%s %q: got %v; want %v ± %.0f", what, v, got, want, tol)
			}
		}
	}
	uniform("event types", eventTypes, ysbEventTypes)
	uniform("ad types", adTypes, ysbAdTypes)
	adIDs := make([]string, len(ads))
	for i, a := range ads {
		adIDs[i] = a.AdID
	}
	uniform("ads", adsSeen, adIDs)
	if len(users) < ysbPoolSize*99/100 {
		t.Errorf("%d distinct users; want about %d", len(users), ysbPoolSize)
	}
	for i := 1; i < n; i++ {
		if events[i].EventTime < events[i-1].EventTime {
			t.Fatalf("event %d time %d < previous %d", i, events[i].EventTime, events[i-1].EventTime)
		}
	}
}

func TestYSBEventTime(t *testing.T) {
	tests := []struct {
		rate float64
		par  int
		want []int64 // times of instance 1's first events, from StartTime
	}{
		{0, 2, []int64{0, 0, 0}},
		{1000, 2, []int64{1, 3, 5}},
		{500, 3, []int64{2, 8, 14}},
	}
	for _, tt := range tests {
		src := YSB{Seed: 1, Events: 9, StartTime: 1000, EventTimeRate: tt.rate}
		recs := readAll(t, src, 1, tt.par, 1024)
		for i, w := range tt.want {
			if got := recs[i].EventTime - 1000; got != w {
				t.Errorf("rate %v, instance 1 of %d, event %d: got time %d; want %d", tt.rate, tt.par, i, got, w)
			}
		}
	}
}

func TestYSBReadDoesNotAllocate(t *testing.T) {
	for _, src := range []YSB{
		{Seed: 1},
		{Seed: 1, Duration: time.Hour},
		{Seed: 1, Rate: 1e15, Duration: time.Hour},
	} {
		r, err := src.Open(weir.SourceContext{Instance: 0, Parallelism: 1})
		if err != nil {
			t.Fatal(err)
		}
		r.Read()
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := r.Read(); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%+v: Read allocates %v times; want 0", src, allocs)
		}
		r.Close()
	}
}
