package weir

import (
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/ds2"
	"github.com/weirstream/weir/internal/engine"
)

// AutoscalePolicy says when a job that sizes itself (Autoscale) acts.
type AutoscalePolicy struct {
	// Every is the epochs of a policy interval (of BatchInterval each: a
	// job with count-based epochs does not size itself): the job's
	// figures over each are one sizing.
	Every int
	// WarmUp is the intervals ignored after each change (counted from
	// the end of its migration); Activation the intervals in a row that
	// must ask for more instances before they come, as many as the newest
	// asked for; DownWindow the
	// intervals in a row (none with a source blocked by what follows it
	// for more than a tenth of the interval) that must ask for two or more
	// fewer before they go, to the most any of them asked for. Decreases
	// of one are never taken.
	WarmUp, Activation, DownWindow int
	// Utilization is the share of an instance's true processing rate the
	// sizings plan for; nothing changes while the instances would run
	// within Boundary of it.
	Utilization, Boundary float64
	// OverProvision is the share of instances added to each sizing.
	OverProvision float64
}

// DefaultAutoscalePolicy: intervals of 10 epochs, one ignored after a
// change, two in a row to scale up, ten to scale down, instances planned
// at 80 % of their true rate and left alone between 65 % and 95 %.
var DefaultAutoscalePolicy = AutoscalePolicy{Every: 10, WarmUp: ds2.DefaultPolicy.WarmUp, Activation: ds2.DefaultPolicy.Activation,
	DownWindow: ds2.DefaultPolicy.DownWindow, Utilization: ds2.DefaultPolicy.Utilization, Boundary: ds2.DefaultPolicy.Boundary}

// Autoscale makes the job size its keyed operators by itself while it
// runs, as DS2 does: at the end of every policy interval each task's true
// processing and output rates (records over the time it spent working)
// give, in one pass from the sources, the instances each keyed operator
// needs to serve what the sources read, or would have read had nothing
// downstream held them back (the key groups it receives
// packed onto instances, so that a key group too heavy for any instance
// is named rather than scaled for); the largest of those, once the policy
// agrees, is what the keyed operators are rescaled to, live, with opts
// (default Batched), within their planned instances (Workers; start them
// lower with ActiveInstances); the movable sources' shares move with
// them. Job.ScaleDecisions lists what it did. Every process of a job of
// several decides alike from the figures they all share, with no master.
// Under Partitioning "prompt" the rounds' task count follows the load
// within the instances the sizing gives the aggregation. In an elastic
// job (ElasticCluster) the sizing stays within the instances of the
// processes taking part; Job.ProcessesNeeded (a metric and a log line
// too) says when more processes are needed or fewer would do, a process
// that joins or leaves is counted from the same round on every process,
// and the instances a join or leave spread the key groups over are taken
// as they are. A job whose keyed operators cannot move (Ordered, keyed
// state of its own) does not size itself: Run refuses it.
func Autoscale(p AutoscalePolicy, opts ...RescaleOption) JobOption {
	var r engine.Rescale
	for _, o := range opts {
		o(&r)
	}
	return dataflow.Autoscale(dataflow.AutoscaleConfig{
		Policy: ds2.Policy{WarmUp: p.WarmUp, Activation: p.Activation, DownWindow: p.DownWindow,
			Utilization: p.Utilization, Boundary: p.Boundary, OverProvision: p.OverProvision},
		Every: p.Every, Strategy: r.Strategy, Gap: r.Gap, PerPair: r.PerPair, MaxPerStep: r.MaxPerStep})
}

// ScaleDecision is one decision of a job that sizes itself: at the end of
// the policy interval of Epoch its keyed operators went From -> To
// instances; Hot names key groups no instance could serve; Wanted, when
// the sizing asked for more instances than the processes run (Workers
// each), is how many: more processes are needed.
type ScaleDecision = engine.ScaleDecision

// ScaleDecisions returns what a job that sizes itself decided so far,
// oldest first, and why it stopped deciding if it did (its decisions
// could not be carried out).
func (j *Job) ScaleDecisions() ([]ScaleDecision, error) { return j.e.ScaleDecisions() }

// ScaleDisagreements counts the rounds of a job of several processes that
// sizes itself whose processes sized them from figures that differed
// (by the digests they shared): none of those rounds decided anything.
func (j *Job) ScaleDisagreements() int { return j.e.ScaleDisagreements() }

// WantedInstances is, when the job sizes itself and its sizing asks for
// more instances of its keyed operators than its processes run (Workers
// each), how many it asks for: more processes are needed. The figures
// say so too (weir_autoscale_wanted_instances), and a log line once per
// change. 0 otherwise.
func (j *Job) WantedInstances() int { return j.e.WantedInstances() }

// ProcessesNeeded is, when the job sizes itself, how many processes its
// last sizing needs for the keyed operators' instances (those they are
// given run on the lowest processes taking part, Workers each) and how
// many took part in it: more processes are needed when need is above
// running (a warning says "start more processes"), fewer would do when it
// is below (a log line says "fewer processes would do"; the highest then
// hold no key groups and may leave). The figures say so too
// (weir_autoscale_processes_needed, weir_autoscale_processes_running);
// weir launch --elastic starts and stops processes by them. 0, 0 before a
// round is sized.
func (j *Job) ProcessesNeeded() (need, running int) { return j.e.ProcessesNeeded() }
