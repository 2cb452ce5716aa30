package weir

import "github.com/weirstream/weir/internal/op"

// Paced replays in at a steady rate records per second of wall time in
// all, as a real stream arrives: each of the source's instances reads its
// share at rate/instances. A recorded input (a file, say) then behaves
// like a live one, for demonstrations and for tests of recovery and
// latency. The pace starts at the first Read; a reader that falls behind
// catches up without bursts beyond one batch.
func Paced[T any](in Input[T], rate float64) Input[T] {
	return op.Paced[T](in, rate)
}
