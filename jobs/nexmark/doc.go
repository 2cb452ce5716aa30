// Package nexmark is the Nexmark benchmark as Weir jobs: the queries of
// the Flink nexmark suite over gen.NexmarkEvent streams, each with a plain
// sequential computation of the same result (Reference) that tests compare
// the engine with, and a hand-written single-threaded loop (Baseline), the
// yardstick of `weir bench nexmark`.
//
//	job := weir.NewJob("q5")
//	events := weir.Source(job, "events", gen.Nexmark{Events: 1e6, StartTime: t0})
//	var sum nexmark.Checksum
//	err := nexmark.Add("q5", events, nexmark.Sinks{Sum: &sum})
//	...
//	err = job.Run(ctx) // then sum digests q5's result
package nexmark
