// Package progress tracks epochs and watermarks. It is pure: it takes the
// markers an operator instance receives and tells it when an epoch is
// complete, without clocks, goroutines or channels.
//
// Every record belongs to an epoch. A sender ends epoch e by sending
// Marker{Epoch: e}; the records it sends after that belong to e+1. An
// operator instance with several senders (upstream instances, or the inputs
// of a union or join) finishes epoch e once every sender has delivered the
// marker for e: the Aligner tells it so, and which senders are already ahead,
// so that their records can be held back until the epoch completes. A sender
// that sends a Final marker is done: it counts as having delivered every
// later epoch, and its watermark becomes +inf. A sender whose marker is
// Idle (an EventTime instance that has had no record for a while) still
// ends its epochs, but its watermark is left out of the minimum; when all
// live senders are idle, the aligned marker is idle too and its watermark
// is the highest of theirs. A sender's watermark is the one of its last
// marker, which may be lower than its one before (a source instance that
// took over shares behind it); the aligned watermark never goes back.
//
//	a := progress.NewAligner(2)
//	a.Ahead(0)                  // false: sender 0 is in the current epoch
//	_, ok := a.Mark(0, m0)      // ok == false: sender 1 has not ended epoch 0
//	out, ok := a.Mark(1, m1)    // ok == true: out is epoch 0 with the min watermark
//
// Invariants: epochs complete in order, each exactly once; the watermark of
// a completed epoch never decreases; the final marker is produced once, after
// every sender is final.
package progress
