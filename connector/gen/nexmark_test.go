package gen

import (
	"fmt"
	"slices"
	"testing"
)

func TestNexmarkProportions(t *testing.T) {
	const events = 10_000
	evs := readAll(t, Nexmark{Seed: 1, Events: events, StartTime: 1}, 0, 1, 1024)
	if len(evs) != events {
		t.Fatalf("read %d events; want %d", len(evs), events)
	}
	for start := 0; start < events; start += 50 {
		var n [3]int
		for i, e := range evs[start : start+50] {
			n[e.Kind]++
			want := BidKind
			switch {
			case i == 0:
				want = PersonKind
			case i <= 3:
				want = AuctionKind
			}
			if e.Kind != want {
				t.Fatalf("event %d: got kind %v; want %v", start+i, e.Kind, want)
			}
		}
		if n != [3]int{1, 3, 46} {
			t.Fatalf("events %d..%d: got %v persons/auctions/bids; want [1 3 46]", start, start+49, n)
		}
	}
}

func TestNexmarkReferences(t *testing.T) {
	const events = 100_000
	evs := readAll(t, Nexmark{Seed: 2, Events: events, StartTime: 1}, 0, 1, 1024)
	nextPerson, nextAuction := int64(nxFirstPersonID), int64(nxFirstAuctionID)
	var bids, hotAuction int
	for i, e := range evs {
		if e.Time() != 1+int64(i)/1000 {
			t.Fatalf("event %d: got time %d; want %d", i, e.Time(), 1+i/1000)
		}
		switch e.Kind {
		case PersonKind:
			p := e.Person
			if p.ID != nextPerson {
				t.Fatalf("event %d: got person %d; want %d", i, p.ID, nextPerson)
			}
			nextPerson++
			if p.Name == "" || p.Email == "" || p.City == "" || p.State == "" || len(p.CreditCard) != 19 {
				t.Fatalf("event %d: incomplete person %+v", i, p)
			}
			if e.Auction != (Auction{}) || e.Bid != (Bid{}) {
				t.Fatalf("event %d: person with auction or bid fields set", i)
			}
		case AuctionKind:
			a := e.Auction
			if a.ID != nextAuction {
				t.Fatalf("event %d: got auction %d; want %d", i, a.ID, nextAuction)
			}
			nextAuction++
			if a.Seller < nxFirstPersonID || a.Seller >= nextPerson {
				t.Fatalf("event %d: seller %d does not exist (persons %d..%d)", i, a.Seller, nxFirstPersonID, nextPerson-1)
			}
			if a.Reserve < a.InitialBid || a.Expires <= a.DateTime || a.Category < 10 || a.Category > 14 || a.ItemName == "" {
				t.Fatalf("event %d: bad auction %+v", i, a)
			}
		case BidKind:
			b := e.Bid
			bids++
			if b.Auction < nxFirstAuctionID || b.Auction >= nextAuction {
				t.Fatalf("event %d: bid on auction %d, which does not exist (auctions %d..%d)", i, b.Auction, nxFirstAuctionID, nextAuction-1)
			}
			if b.Bidder < nxFirstPersonID || b.Bidder >= nextPerson {
				t.Fatalf("event %d: bidder %d does not exist (persons %d..%d)", i, b.Bidder, nxFirstPersonID, nextPerson-1)
			}
			if b.Price <= 0 || b.Channel == "" || b.URL == "" {
				t.Fatalf("event %d: bad bid %+v", i, b)
			}
			if (b.Auction-nxFirstAuctionID)%nxHotBatch == 0 {
				hotAuction++
			}
			if b.Auction < nextAuction-nxInFlightAuctions-1 {
				t.Fatalf("event %d: bid on auction %d; want one of the latest %d (up to %d)", i, b.Auction, nxInFlightAuctions+1, nextAuction-1)
			}
		}
	}
	// Half the bids go to the hot auction of their hundred, plus those the
	// other half picks by chance.
	if got := float64(hotAuction) / float64(bids); got < 0.49 || got > 0.53 {
		t.Errorf("got %.3f of the bids on hot auctions; want about 0.5", got)
	}
}

func TestNexmarkSizes(t *testing.T) {
	evs := readAll(t, Nexmark{Seed: 3, Events: 50_000, StartTime: 1}, 0, 1, 1024)
	var size, n [3]int
	for _, e := range evs {
		var s int
		switch e.Kind {
		case PersonKind:
			p := e.Person
			s = 8 + len(p.Name) + len(p.Email) + len(p.CreditCard) + len(p.City) + len(p.State) + len(p.Extra)
		case AuctionKind:
			a := e.Auction
			s = 8 + len(a.ItemName) + len(a.Description) + 5*8 + len(a.Extra)
		case BidKind:
			s = 4*8 + len(e.Bid.Extra)
		}
		size[e.Kind] += s
		n[e.Kind]++
	}
	for k, want := range []int{nxAvgPersonBytes, nxAvgAuctionBytes, nxAvgBidBytes} {
		if got := size[k] / n[k]; got < want*95/100 || got > want*105/100 {
			t.Errorf("%v: got average size %d; want about %d", NexmarkKind(k), got, want)
		}
	}
}

func TestNexmarkDeterministicAndSplit(t *testing.T) {
	src := Nexmark{Seed: 4, Events: 3000, StartTime: 1}
	if a, b := readAll(t, src, 1, 2, 1024), readAll(t, src, 1, 2, 1024); !slices.Equal(a, b) {
		t.Errorf("two reads of the same seed differ")
	}
	other := src
	other.Seed = 5
	if a, b := readAll(t, src, 0, 1, 1024), readAll(t, other, 0, 1, 1024); slices.Equal(a, b) {
		t.Errorf("seeds 4 and 5 give the same events")
	}
	for _, tc := range splitCases {
		t.Run(fmt.Sprintf("%d/%d", tc.total, tc.par), func(t *testing.T) {
			checkSplit(t, Nexmark{Seed: 6, Events: int64(tc.total), StartTime: 1}, tc.total, tc.par)
		})
	}
}
