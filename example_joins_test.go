package weir_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir"
)

// bid is the record type of these examples: a bid on an auction, at an
// event time in milliseconds.
type bid struct {
	Auction int
	Price   int
	At      int64
}

func ExampleWindowAll() {
	// The total of all bids per second, whatever their auction: each
	// source instance sums its bids, one instance adds the sums up.
	job := weir.NewJob("total", weir.Workers(2))
	bids := weir.EventTime(weir.Source(job, "bids", weir.SliceSource[bid]{Records: []bid{
		{1, 10, 100}, {2, 5, 300}, {1, 7, 900}, {3, 20, 1_100}, {2, 1, 1_800},
	}}), func(b bid) int64 { return b.At }, time.Second)
	prices := weir.Map(bids, func(b bid) int { return b.Price }, weir.Stateless())
	totals := weir.Reduce(weir.WindowAll(prices, weir.Tumbling(time.Second)), func(a, b int) int { return a + b })
	out := &weir.Collect[weir.WindowResult[weir.Unit, int]]{}
	weir.Sink(totals, out)
	if err := job.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	res := out.Records()
	slices.SortFunc(res, func(a, b weir.WindowResult[weir.Unit, int]) int { return int(a.Start - b.Start) })
	for _, r := range res {
		fmt.Printf("[%d, %d): %d\n", r.Start, r.End, r.Value)
	}
	// Output:
	// [0, 1000): 22
	// [1000, 2000): 21
}

// bids are the examples' bids: in the first second auctions 1 and 3 have
// two each, in the next auction 2 has two.
var bids = []bid{
	{1, 10, 100}, {2, 5, 300}, {1, 7, 900}, {3, 20, 400}, {3, 2, 800},
	{2, 1, 1_800}, {3, 4, 1_200}, {2, 3, 1_500},
}

func ExampleTopN() {
	// The two auctions with the most bids in each second; auctions 1 and
	// 3 tie in the first second, and both are kept.
	job := weir.NewJob("top2", weir.Workers(2))
	timed := weir.EventTime(weir.Source(job, "bids", weir.SliceSource[bid]{Records: bids}), func(b bid) int64 { return b.At }, time.Second)
	counts := weir.Count(weir.Window(weir.KeyBy(timed, func(b bid) int { return b.Auction }), weir.Tumbling(time.Second)))
	top := weir.TopN(counts, 2, func(a, b int64) bool { return a < b })
	out := &weir.Collect[weir.WindowResult[int, int64]]{}
	weir.Sink(top, out)
	if err := job.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	// A window's results come in rank order from one instance; windows
	// come in no fixed order.
	res := out.Records()
	slices.SortStableFunc(res, func(a, b weir.WindowResult[int, int64]) int { return int(a.Start - b.Start) })
	for _, r := range res {
		fmt.Printf("[%d, %d): auction %d, %d bids\n", r.Start, r.End, r.Key, r.Value)
	}
	// Output:
	// [0, 1000): auction 1, 2 bids
	// [0, 1000): auction 3, 2 bids
	// [1000, 2000): auction 2, 2 bids
	// [1000, 2000): auction 3, 1 bids
}

func ExampleArgMax() {
	// The auctions with the most bids in each second (Nexmark's hot
	// items): every auction that ties for the most.
	job := weir.NewJob("hot", weir.Workers(2))
	timed := weir.EventTime(weir.Source(job, "bids", weir.SliceSource[bid]{Records: bids}), func(b bid) int64 { return b.At }, time.Second)
	counts := weir.Count(weir.Window(weir.KeyBy(timed, func(b bid) int { return b.Auction }), weir.Tumbling(time.Second)))
	hot := weir.ArgMax(counts, func(a, b int64) bool { return a < b })
	out := &weir.Collect[weir.WindowResult[int, int64]]{}
	weir.Sink(hot, out)
	if err := job.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	res := out.Records()
	slices.SortStableFunc(res, func(a, b weir.WindowResult[int, int64]) int { return int(a.Start - b.Start) })
	for _, r := range res {
		fmt.Printf("[%d, %d): auction %d, %d bids\n", r.Start, r.End, r.Key, r.Value)
	}
	// Output:
	// [0, 1000): auction 1, 2 bids
	// [0, 1000): auction 3, 2 bids
	// [1000, 2000): auction 2, 2 bids
}

// person and auction are the record types of the join examples.
type person struct {
	ID    int
	Name  string
	State string
	At    int64
}

type auction struct {
	ID     int
	Seller int
	At     int64
}

var (
	persons = []person{{1, "ann", "OR", 1_000}, {2, "bob", "CA", 2_000}, {3, "cid", "NY", 3_000}}
	opened  = []auction{{10, 1, 1_500}, {11, 2, 9_000}, {12, 1, 30_000}, {13, 3, 3_100}}
)

func ExampleIntervalJoin() {
	// Auctions opened within 10 seconds after their seller registered.
	job := weir.NewJob("new-sellers", weir.Workers(2))
	ps := weir.EventTime(weir.Source(job, "people", weir.SliceSource[person]{Records: persons}), func(p person) int64 { return p.At }, time.Minute)
	as := weir.EventTime(weir.Source(job, "auctions", weir.SliceSource[auction]{Records: opened}), func(a auction) int64 { return a.At }, time.Minute)
	joined := weir.IntervalJoin(
		weir.KeyBy(ps, func(p person) int { return p.ID }),
		weir.KeyBy(as, func(a auction) int { return a.Seller }),
		0, 10*time.Second,
		func(id int, p person, a auction) string { return fmt.Sprintf("%s opened auction %d", p.Name, a.ID) })
	out := &weir.Collect[string]{}
	weir.Sink(joined, out)
	if err := job.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	res := out.Records()
	slices.Sort(res)
	for _, s := range res {
		fmt.Println(s)
	}
	// Output:
	// ann opened auction 10
	// bob opened auction 11
	// cid opened auction 13
}

func ExampleInnerJoin() {
	// Every auction with its seller's name and state, whichever of the
	// two arrived first (Nexmark's query 3 without its filters). Without
	// event time or StateTTL, both sides are kept for the whole job.
	job := weir.NewJob("sellers", weir.Workers(2))
	ps := weir.Source(job, "people", weir.SliceSource[person]{Records: persons})
	as := weir.Source(job, "auctions", weir.SliceSource[auction]{Records: opened})
	joined := weir.InnerJoin(
		weir.KeyBy(ps, func(p person) int { return p.ID }),
		weir.KeyBy(as, func(a auction) int { return a.Seller }),
		func(id int, p person, a auction) string {
			return fmt.Sprintf("auction %d: %s (%s)", a.ID, p.Name, p.State)
		})
	out := &weir.Collect[string]{}
	weir.Sink(joined, out)
	if err := job.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	res := out.Records()
	slices.Sort(res)
	for _, s := range res {
		fmt.Println(s)
	}
	// Output:
	// auction 10: ann (OR)
	// auction 11: bob (CA)
	// auction 12: ann (OR)
	// auction 13: cid (NY)
}
