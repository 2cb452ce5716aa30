// Package summary carries a small message between the processes of a
// distributed job, so that every process sees the whole job with no
// master: each process sends every peer its own counts (records read,
// late records, dead letters...), the newest checkpoint it knows to be
// complete, whether it was asked to stop, its figures (per-instance
// metrics, opaque here) and its autoscaler's share (figures frozen at
// policy epochs and round digests, opaque here), a few times per second, when kicked (at most once
// per 100 ms: the engine kicks at epoch ends), and once more, marked
// final, when its part of the job has ended.
//
// Message and its encoding, and Board (the newest message of every
// process, and their sums) are pure. Exchange does the I/O over a
// transport.Network: one goroutine sends on a timer, one per peer
// receives, from each process that takes the peer's slot in turn
// (Rejoin: an elastic job's slot taken again after its process left).
package summary
