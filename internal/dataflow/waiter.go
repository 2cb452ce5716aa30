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
