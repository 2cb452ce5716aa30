// Package ds2 sizes a dataflow's operators from their true rates, as DS2
// does (Kalavri et al., OSDI 2018), and decides when a sizing is acted on.
// It is pure: the caller brings each policy interval's figures, and the
// same figures give the same decisions on every process.
//
// Size takes, for each operator in topological order, its upstream
// operators, its instances and its true processing and output rates
// (records in and out per second of useful time, summed over its
// instances), and for a source the rate it must sustain. One pass from the
// sources gives each operator's target input (DS2's equation 7: the sum of
// its upstream operators' projected outputs, an operator's projected
// output being its target input times its true output over true
// processing rate) and its parallelism (equation 8: that input over one
// instance's true processing rate, rounded up), at a chosen utilization of
// an instance.
//
// Beyond DS2, which averages rates and so misses its target under skew, a
// keyed operator's key-group counts bound its parallelism: a key group
// lives on one instance, so the parallelism is the smallest at which the
// key groups, heaviest first onto the least loaded instance, fit every
// instance's capacity at the target input; when the heaviest key group
// alone exceeds one instance's capacity no parallelism can meet the
// target, and the sizing names it (Hot).
//
// FromStats builds the operators of a sizing from a running job's tasks
// and two snapshots of its figures (internal/metrics): the interval's
// records in and out over useful time, the records sent to each key
// group, and for a source, which keeps its instances, the rate it read.
//
// A Policy sizes at a target utilization and at the two edges of a band
// around it (Policy.Size gives the three as a Band), as Flink's autoscaler
// does, so that rates wandering inside the band change nothing. Decider
// applies it to successive bands: warm-up intervals ignored after each
// change; an increase once Activation intervals in a row need more
// instances than run to stay under the band's top (to the fewest they
// plan for); a decrease once DownWindow intervals in a row would stay
// under the band's bottom with two fewer and no source is catching up on
// a backlog (to the most they plan for); an over-provisioning factor.
// Decreases of one are never acted on.
package ds2
