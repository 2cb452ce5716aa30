// Package nexmark is the Nexmark benchmark as Weir jobs: the queries of
// the Flink nexmark suite over a stream of gen.NexmarkEvent (people
// registering, opening auctions and bidding), each with a plain sequential
// computation of the same result (Reference), which tests compare the
// engine with, and a hand-written single-threaded loop (Baseline), the
// yardstick of `weir bench nexmark`.
//
//	job := weir.NewJob("q5", weir.Workers(2))
//	events := weir.Source(job, "events", gen.Nexmark{Events: 1e6, StartTime: t0})
//	var sum nexmark.Checksum
//	if err := nexmark.Add("q5", events, nexmark.Sinks{Sum: &sum}); err != nil { ... }
//	err := job.Run(ctx) // sum now digests q5's result
//
// # The queries
//
// Event time is an event's DateTime; windows are aligned to multiples of
// their size (or slide) from time 0; on a bounded input every window fires
// at the end. Results are CSV lines with the columns of Header:
//
//   - q0 (auction,bidder,price,dateTime,extra): every bid.
//   - q1 (auction,bidder,price,dateTime,extra): every bid, its price in
//     euros, price × 0.908, written as the exact decimal (prices are whole
//     cents, so it has at most three decimals, trailing zeros dropped:
//     1000 → 908, 123 → 111.684, 150 → 136.2). Flink's suite computes the
//     double 0.908*price, which may be off the exact value in its last
//     bits (and then prints as, say, 111.68400000000001).
//   - q2 (auction,price): the bids on auctions whose id is a multiple of
//     123.
//   - q3 (name,city,state,id): auctions of category 10 joined with their
//     seller, for sellers in OR, ID or CA, unwindowed: a row per pair as
//     soon as both are there.
//   - q4 (category,avg): per category, the average of its auctions'
//     winning prices (q9), as a float64 written in its shortest exact
//     form. It is an updating result: a row each time a category's average
//     changes; the last row of a category is its value.
//   - q5 (auction,num): per sliding window of 10 s every 2 s, the auctions
//     with the most bids (all of them on a tie) and that number.
//   - q7 (auction,price,bidder,dateTime,extra): per 10 s tumbling window,
//     the bids at the window's highest price.
//   - q8 (id,name,starttime): the persons who registered in a 10 s
//     tumbling window and opened an auction in the same window, once per
//     person and window, with the window's start. (If one id registered
//     twice in a window, the least name counts.)
//   - q9 (the auction's columns, then auction,bidder,price,bid_dateTime,
//     bid_extra): each auction's winning bid, the highest among its bids
//     with auction.dateTime ≤ bid.dateTime ≤ auction.expires, the earliest
//     on a tie (then the lowest bidder, then the least extra, so that the
//     winner does not depend on the order of arrival). An auction without
//     such a bid has no row.
//   - q11 (bidder,bid_count,starttime,endtime): per bidder, sessions of
//     bids less than 10 s apart (a bid 10 s or more after the previous one
//     opens a new session): their number of bids, the first bid's time and
//     the last one's plus 10 s.
//
// Times are integer milliseconds since the Unix epoch; strings are quoted
// as RFC 4180 says when they hold a comma, a quote or a line break.
//
// # Checksums
//
// Sinks.Sum digests the final result without writing it: the number of
// rows and a wrapping sum of a hash of each row's typed columns, which
// ChecksumOf computes alike from CSV lines (a test checks that they
// agree), so Reference, Baseline and the engine can be compared by
// checksum. The checksum sink runs as one instance and is saved in
// checkpoints.
//
// Add assigns event time after each query's filters, with MaxOutOfOrder
// of allowed disorder (the generator's events are in order; a file's
// events may be less so). Baseline and the engine see the same events when
// the generator has a StartTime; with StartTime 0 its event times follow
// the wall clock when it opens.
package nexmark
