package gen_test

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// readAll reads instance inst of par of src to the end.
func readAll[T any](src weir.Input[T], inst, par int) []T {
	r, err := src.Open(weir.SourceContext{Instance: inst, Parallelism: par})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	var out []T
	for {
		batch, err := r.Read()
		out = append(out, batch...)
		if err == io.EOF {
			return out
		} else if err != nil {
			panic(err)
		}
	}
}

func ExampleYSB() {
	src := gen.YSB{Seed: 42, Events: 30_000, StartTime: gen.YSBEventsStart}
	ads := src.Ads()
	campaign := make(map[string]string, len(ads))
	for _, a := range ads {
		campaign[a.AdID] = a.CampaignID
	}
	fmt.Println("ads:", len(ads), "campaigns:", len(ads)/10)

	// Two instances share the events: every global sequence number once.
	views := 0
	perCampaign := map[string]int{}
	for inst := range 2 {
		events := readAll(src, inst, 2)
		fmt.Printf("instance %d: %d events, first at %d\n", inst, len(events), events[0].EventTime)
		for _, e := range events {
			if e.EventType == "view" {
				views++
				perCampaign[campaign[e.AdID]]++
			}
		}
	}
	fmt.Println("views:", views, "campaigns viewed:", len(perCampaign))
	// Output:
	// ads: 1000 campaigns: 100
	// instance 0: 15000 events, first at 1700000000000
	// instance 1: 15000 events, first at 1700000000000
	// views: 9884 campaigns viewed: 100
}

func ExampleZipf() {
	src := gen.Zipf{Keys: 1000, S: 1.0, Events: 100_000, Seed: 1, StartTime: 1}
	counts := make([]int, 1000)
	for _, r := range readAll(src, 0, 1) {
		counts[r.Key]++
	}
	// Key k is drawn with probability ∝ 1/(k+1): key 0 about twice as
	// often as key 1, three times as often as key 2.
	fmt.Println("key 0:", counts[0], "key 1:", counts[1], "key 2:", counts[2], "key 999:", counts[999])
	// Output:
	// key 0: 13381 key 1: 6590 key 2: 4473 key 999: 12
}

func ExampleZipfSampler() {
	z := gen.NewZipfSampler(10, 0.5)
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]uint64, 8)
	for i := range keys {
		keys[i] = z.Sample(r)
	}
	fmt.Println(keys)
	// Output:
	// [7 6 0 0 2 0 0 4]
}

func ExampleYSBEvent_AppendJSON() {
	e := gen.YSBEvent{
		UserID: "u1", PageID: "p1", AdID: "a1", AdType: "banner",
		EventType: "view", EventTime: 1700000000123, IPAddress: "10.0.0.1",
	}
	fmt.Println(string(e.AppendJSON(nil)))
	// Output:
	// {"user_id":"u1","page_id":"p1","ad_id":"a1","ad_type":"banner","event_type":"view","event_time":"1700000000123","ip_address":"10.0.0.1"}
}

func ExampleNexmark() {
	var n [3]int
	for _, e := range readAll(gen.Nexmark{Seed: 1, Events: 1000, StartTime: 1}, 0, 1) {
		n[e.Kind]++
	}
	fmt.Println("persons:", n[gen.PersonKind], "auctions:", n[gen.AuctionKind], "bids:", n[gen.BidKind])
	// Output:
	// persons: 20 auctions: 60 bids: 920
}
