package engine

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir/internal/agree"
	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/routing"
)

// tick freezes this process's figures at a new policy epoch, steps the
// rounds every process taking part has frozen, and carries out what they
// agreed on.
func (a *autoscaler) tick() error {
	a.freeze()
	now := a.j.present()
	self := a.j.Process()
	for {
		e, ok := a.board.next(a.stepped, now)
		if !ok {
			break
		}
		procs := a.roundProcs(now, e)
		if !slices.Contains(procs, self) {
			// A process that joined sizes from the first round whose
			// whole interval it took part in, as the others count it.
			a.stepped = e
			continue
		}
		r, ready, complete := a.board.round(e, procs, a.gone)
		if !ready {
			break
		}
		a.stepped = e
		if !complete {
			a.j.Logger().Debug("weir: autoscale: a round passed over (a process froze a later epoch)", "epoch", e)
			continue
		}
		since := a.sized
		if !slices.Equal(procs, a.procs) {
			// The sizers start afresh from this round (agree.Sizer's
			// begin), a joiner's too: every process measures the moves
			// over the interval alone.
			since = 0
		}
		a.procs = procs
		r.Active, r.Moved = a.tableAt(e, since)
		r.Capacity = a.capacity(procs)
		a.sized = e
		a.inForce(r)
		out, err := a.sizer.Step(r)
		if err != nil {
			return err
		}
		if out.Skipped != "" {
			a.j.Logger().Debug("weir: autoscale: a round not sized", "epoch", e, "reason", out.Skipped)
		}
		a.board.putDigest(self, e, out.Digest)
		a.checks = append(a.checks, roundCheck{out, procs})
		a.j.kickSummaries()
	}
	return a.check()
}

// roundCheck is a round stepped whose digests have not all come, and the
// processes that took part in it.
type roundCheck struct {
	out   agree.Outcome
	procs []int
}

// roundProcs is the processes of now (those present) that took part in
// the policy interval ending at epoch e: a process that joined counts
// from the first round after its join epoch's interval (before, its
// figures are not its own: it froze the epoch the others had), and one
// that leaves up to the last round before its leave epoch. Both are
// epochs every process names alike once it steps the round (a leave is
// announced before its epoch), so every process counts the same ones.
func (a *autoscaler) roundProcs(now []int, e uint64) []int {
	var out []int
	for _, p := range now {
		from, leave := a.j.slots.from(p), a.j.leaveEpoch(p)
		if (from == 0 || from+a.every <= e) && (leave == 0 || e < leave) {
			out = append(out, p)
		}
	}
	return out
}

// gone says whether process p has left the job here (its leave epoch is
// complete): a round it froze no figures for is passed over, not waited
// for.
func (a *autoscaler) gone(p int) bool {
	l := a.j.leaveEpoch(p)
	return l > 0 && a.j.CompletedEpoch() >= l
}

// freeze takes this process's figures once it has completed a new policy
// epoch (the newest, if it completed several since the last tick). A
// process none of whose instances runs completes no epoch and has nothing
// to measure: it freezes its figures at the newest epoch a peer froze.
func (a *autoscaler) freeze() {
	a.j.mu.Lock()
	reg, ready := a.j.reg, a.j.statsReady
	a.j.mu.Unlock()
	if reg == nil || !ready {
		return
	}
	c := a.j.CompletedEpoch() // before the figures: they cover it
	e := c - c%a.every
	if e > 0 && e <= a.frozen {
		return
	}
	snap := reg.Snapshot(time.Now())
	if !slices.ContainsFunc(snap.Instances, func(in metrics.InstanceStats) bool { return in.Running }) {
		e = max(e, a.board.newestOthers(a.j.Process()))
	}
	if e == 0 || e <= a.frozen {
		return
	}
	a.board.putFrozen(a.j.Process(), e, metrics.Encode(nil, snap))
	if e > 8*a.every {
		// Bounded whether or not rounds are stepped (a peer may have
		// stopped freezing).
		a.board.prune(e - 8*a.every)
	}
	a.frozen = e
	a.j.kickSummaries()
}

// tableAt is the keyed operators' active instances in the table in force
// at epoch e, and whether a table took force after epoch prev, the last
// round sized (within the policy interval that ends at e if none was).
func (a *autoscaler) tableAt(e, prev uint64) (int, bool) {
	t := a.j.Schedule(a.planned).At(e)
	owners := map[int]bool{}
	for kg := range t.Groups() {
		owners[t.Owner(partition.KeyGroup(kg))] = true
	}
	if prev == 0 && e >= a.every {
		prev = e - a.every
	}
	return len(owners), t.From > prev
}

// inForce marks the newest decision in force once a round's table runs
// its instances and nothing moved within the round.
func (a *autoscaler) inForce(r agree.Round) {
	a.j.autoscale.mu.Lock()
	defer a.j.autoscale.mu.Unlock()
	ds := a.j.autoscale.decisions
	if n := len(ds); n > 0 && ds[n-1].InForce == 0 && r.Epoch > ds[n-1].Epoch && !r.Moved && r.Active == ds[n-1].To {
		ds[n-1].InForce = r.Epoch
	}
}

// check acts on the rounds whose digests have all come: a round every
// process computed alike records its decision, and the lowest process
// taking part carries it out; a round whose digests differ decides
// nothing, and the deciders start afresh at an epoch every process names
// alike. A round whose digests do not all come within sharedRounds
// rounds is dropped.
func (a *autoscaler) check() error {
	var keep []roundCheck
	for _, c := range a.checks {
		out, procs := c.out, c.procs
		heard, same := a.board.agreed(out.Epoch, procs, out.Digest)
		switch {
		case !heard && a.stepped < out.Epoch+sharedRounds*a.every:
			keep = append(keep, c)
		case !heard:
			a.j.Logger().Debug("weir: autoscale: a round's digests did not all come", "epoch", out.Epoch)
		case !same:
			a.j.autoscale.mu.Lock()
			a.j.autoscale.differed++
			a.j.autoscale.mu.Unlock()
			a.j.Logger().Warn("weir: autoscale: the processes sized a round from figures that differ; nothing is decided", "epoch", out.Epoch)
			// On a grid: processes that saw the difference at
			// different rounds (one dropped a round the other sized)
			// still start afresh at the same one.
			grid := (sharedRounds + 1) * a.every
			a.sizer.ResetAt((out.Epoch/grid + 2) * grid)
		default:
			if err := a.agreed(out, len(procs), len(procs) > 0 && procs[0] == a.j.Process()); err != nil {
				return err
			}
		}
	}
	a.checks = keep
	return nil
}

// agreed records a round every process computed alike and, on the
// process that acts, carries out its decision.
func (a *autoscaler) agreed(out agree.Outcome, running int, acts bool) error {
	a.wantMore(out, running)
	if !out.Changed {
		return nil
	}
	d := ScaleDecision{Epoch: out.Epoch, From: out.From, To: out.To, Wanted: out.Wanted}
	for _, h := range out.Hot {
		d.Hot = append(d.Hot, fmt.Sprintf("key group %d of %s needs %.0f records/s; an instance serves %.0f", h.KeyGroup, a.names[h.Operator], h.Need, h.Capacity))
	}
	a.j.autoscale.mu.Lock()
	a.j.autoscale.decisions = append(a.j.autoscale.decisions, d)
	a.j.autoscale.mu.Unlock()
	a.j.Logger().Info("weir: autoscale", "epoch", out.Epoch, "from", out.From, "to", out.To)
	if !acts {
		return nil
	}
	_, err := a.j.Rescale(Rescale{Instances: out.To, Strategy: a.cfg.Strategy, Gap: a.cfg.Gap, PerPair: a.cfg.PerPair, MaxPerStep: a.cfg.MaxPerStep,
		Loads: a.loadsByGroup(out.Loads)})
	switch {
	case err == nil:
		a.failed = 0
	case errors.Is(err, errBusy) || errors.Is(err, routing.ErrTooLate):
		// The deciders start afresh once it has not taken force.
		a.j.Logger().Debug("weir: autoscale: a rescale put off", "to", out.To, "reason", err)
	default:
		if a.failed++; a.failed >= 3 {
			return fmt.Errorf("rescale to %d instances: %w", out.To, err)
		}
		a.j.Logger().Warn("weir: autoscale: a rescale refused", "to", out.To, "reason", err)
	}
	return nil
}

// loadsByGroup sums the keyed tasks' key-group loads by the routing
// table they share (their instance count); a table some of whose tasks
// brought no loads, or loads of another length, or fewer than
// minPlacedLoad records a key group on average (too few to tell one key
// group's load from another's), is left out (placed in contiguous
// ranges).
func (a *autoscaler) loadsByGroup(loads map[string][]float64) map[int][]float64 {
	a.j.mu.Lock()
	pars := a.j.keyedPar
	a.j.mu.Unlock()
	out := map[int][]float64{}
	bad := map[int]bool{}
	for name, par := range pars {
		l, ok := loads[name]
		sum := out[par]
		switch {
		case !ok || sum != nil && len(sum) != len(l):
			bad[par] = true
		case sum == nil:
			out[par] = append([]float64(nil), l...)
		default:
			for k := range l {
				sum[k] += l[k]
			}
		}
	}
	for par, l := range out {
		total := 0.0
		for _, x := range l {
			total += x
		}
		if total < minPlacedLoad*float64(len(l)) {
			bad[par] = true
		}
	}
	for par := range bad {
		delete(out, par)
	}
	return out
}

// minPlacedLoad is the records a key group must have received on average
// for a rescale to place key groups by their loads: with n records a key
// group, a key group's count strays by about 1/√n of itself, 10 % here.
const minPlacedLoad = 100

// sayAgain is how many sized rounds the processes needed are said again
// after, while they are not those taking part.
const sayAgain = 5

// capacity is the keyed operators' planned instances that the processes
// procs run (their instances are spread over the processes in equal
// blocks), at least one (0 would be no bound).
func (a *autoscaler) capacity(procs []int) int {
	n, pl := 0, placement{procs: a.j.Processes()}
	for inst := range a.planned {
		if slices.Contains(procs, pl.proc(inst, a.planned)) {
			n++
		}
	}
	return max(n, 1)
}

// wantMore records what a sized round wanted beyond the instances of the
// processes taking part, and the processes its sizing needs; it says,
// when they change and every sayAgain sized rounds while they differ
// from those taking part, that more processes are needed, or that fewer
// would do (what weir launch --elastic and an orchestrator act on: a
// line about a set of processes that changed meanwhile is passed over,
// and said again).
func (a *autoscaler) wantMore(out agree.Outcome, running int) {
	if out.Skipped != "" {
		return
	}
	a.j.autoscale.mu.Lock()
	wasNeed, wasRunning := a.j.autoscale.need, a.j.autoscale.running
	a.j.autoscale.wanted, a.j.autoscale.need, a.j.autoscale.running = out.Wanted, out.Need, running
	a.j.autoscale.mu.Unlock()
	a.said++
	if out.Need == wasNeed && running == wasRunning && a.said < sayAgain {
		return
	}
	a.said = 0
	switch {
	case out.Need > running:
		a.j.Logger().Warn("weir: autoscale: the keyed operators need more instances than the job's processes run; start more processes",
			"epoch", out.Epoch, "wanted", out.Wanted, "instances", out.To, "need", out.Need, "processes", running)
	case out.Need > 0 && out.Need < running:
		a.j.Logger().Info("weir: autoscale: the keyed operators run on fewer processes than take part; fewer processes would do",
			"epoch", out.Epoch, "instances", out.To, "need", out.Need, "processes", running)
	}
}

// leaveEpoch is the first epoch process p takes no part in, once its
// leave is announced (0: it does not leave).
func (j *Job) leaveEpoch(p int) uint64 {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	return j.rescale.leave.from[p]
}

// present is the processes present in the job now, leaving or not, in
// order.
func (j *Job) present() []int {
	var out []int
	for q := range j.Processes() {
		if j.slots.present(q) {
			out = append(out, q)
		}
	}
	return out
}
