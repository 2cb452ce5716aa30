// Package summary carries a small message between the processes of a
// distributed job, so that every process sees the whole job with no
// master: each process sends every peer its own counts (records read,
// late records, dead letters...), the newest checkpoint it knows to be
// complete, and whether it was asked to stop, a few times per second and
// once more, marked final, when its part of the job has ended.
//
// Feed carries another process figure the same way, as opaque bytes on a
// channel of its own (the engine sends internal/metrics' ProcessStats):
// at most once per interval when kicked, and once more, final, at the end.
//
// Message and its encoding, and Board (the newest message of every
// process, and their sums) are pure. Exchange does the I/O over a
// transport.Network: one goroutine sends on a timer, one per peer
// receives.
package summary
