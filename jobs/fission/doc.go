// Package fission is a pipeline whose speed comes from the planner's
// parallel regions: a CPU-heavy stateless scoring map, a selective filter
// and, in the keyed shape, a running total per user kept by Process. It
// is the job of `weir bench fission` and `weir explain fission`.
//
// Reference computes the same output with a plain loop; Checksum folds an
// output stream into an order-sensitive and an order-insensitive digest,
// so that a run can be checked without keeping its records: with
// weir.Ordered the ordered digest must equal the reference's, without it
// the unordered one.
//
//	recs := fission.Generate(1_000_000, 1000)
//	job := weir.NewJob("fission", weir.Workers(2), weir.Ordered())
//	sum := &fission.Checksum{}
//	src := weir.Source(job, "records", weir.SliceSource[fission.Record]{Records: recs})
//	weir.Sink(fission.Query(src, fission.Config{Rounds: 500, Keyed: true}), sum)
//	err := job.Run(ctx) // then sum.Ordered == fission.Reference(recs, cfg).Ordered
package fission
