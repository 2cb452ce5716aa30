// Package skew is the skewed keyed aggregation as a Weir job, and a model
// of how the partitioning strategies of a keyed exchange fare on it.
//
// The job counts records per key in one-second tumbling event-time
// windows, over keys drawn from a Zipf (or uniform) distribution by the
// connector/gen sampler. Reference computes the same counts with a plain
// map; end-to-end tests run the job under every partitioning strategy and
// worker count and compare it with the reference exactly.
//
//	recs, err := skew.Generate(skew.Config{Keys: 100_000, S: 1.5, Events: 1_000_000})
//	job := weir.NewJob("skew", weir.Workers(4), weir.Partitioning("prompt"))
//	col := &skew.Collector{}
//	weir.Sink(skew.Query(weir.Source(job, "records", weir.SliceSource[skew.Record]{Records: recs}), 0), col)
//	err = job.Run(ctx) // then col.Sorted() equals skew.Reference(recs)
//
// Simulate replays epochs of such keys (or of the words of real text,
// GoWords) through the partitioning planners of every strategy, with no
// goroutines and no clock: it reports the imbalance of map blocks and
// reducers, the keys split and the fragments made, and the throughput
// that a simple cost model implies (see SimCost). The same configuration
// always gives the same figures.
package skew
