package dataflow

import "time"

// Waiter is what a Reader implements when its Read may wait for input (a
// generator that paces itself sleeps until records are due, say): Waited
// returns the time it has spent waiting so far. The engine counts that
// time as the source waiting for input rather than as useful work, so a
// paced source does not look busy in the job's figures.
type Waiter interface {
	Waited() time.Duration
}

// Backlogged is what a Reader implements when it knows how much input is
// waiting for it: Backlog returns the records it could read now without
// waiting (a broker's partition end less the reader's position, a
// generator's records due and not read). A job that sizes itself then
// takes the rate records arrive at (read, plus the backlog's growth) as
// the source's target, rather than estimating it from the time the
// source was not held back.
type Backlogged interface {
	Backlog() int64
}
