// Package ysb is the Yahoo Streaming Benchmark query as a Weir job: keep the
// "view" events, map each ad to its campaign, and count the views of each
// campaign in 10-second tumbling event-time windows. It also holds the
// plain single-threaded loop that computes the same query over events in
// memory, the yardstick of `weir bench ysb`, and the plain sequential
// computation that end-to-end tests compare the job's output with.
//
//	q := ysb.Query(events, campaigns, 5*time.Second)
//	weir.Sink(q, out)
package ysb
