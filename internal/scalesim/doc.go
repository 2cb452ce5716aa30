// Package scalesim runs the sizing and placement planners (internal/ds2,
// internal/placement) over a pipeline that exists only as a cost model,
// so that their behaviour is visible at sizes one machine cannot run:
// every instance of an operator serves a fixed number of records a second
// (linear scaling, as DS2's and Dhalion's fixed service time per record),
// operators pass on a fixed share of their input, and a keyed operator's
// key groups take Zipf-skewed shares of it. It is pure: no clock, I/O or
// goroutines, and a seed makes every run the same.
//
// Run steps the source rate through a list and, at each, lets a Decider
// act on the sizings of noisy measured rates until it has been still for
// a while, recording every decision; Optimal is the fewest instances of
// each operator that sustain a rate, from a sweep of fixed parallelisms
// under the same model (key groups placed by the placement heuristic),
// not from the sizing; Steady counts the changes over a long run at one
// rate.
package scalesim
