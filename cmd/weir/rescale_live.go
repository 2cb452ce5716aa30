package main

import (
	"context"
	"fmt"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/jobs/nexmark"
)

// liveStrategy rescales the running job with Job.Rescale: the job runs
// max(--from, --to) instances of every operator from the start, its keyed
// operators with key groups over --from of them (ActiveInstances), and at
// --at moves them over --to while it runs, in the steps of s. The move
// ends when the epoch of its last step has completed; the bytes moved are
// the key groups' state handed over, summed over the processes, deltas on
// a checkpoint at their size (checkpoint reuse, unless --reuse=false),
// and the whole bytes what that state would have taken whole. With
// --leave P, process P leaves the job at --at instead (Job.Leave).
func liveStrategy(s weir.RescaleStrategy) strategy {
	return func(ctx context.Context, r *rescaleRun) (nexmark.Checksum, migration, error) {
		var m migration
		opts := []weir.JobOption{weir.ActiveInstances(r.from)}
		if r.join {
			opts = nil // the members' instances, all of them
		}
		if !r.reuse {
			opts = append(opts, weir.WithoutCheckpointReuse())
		}
		j, err := r.build(max(r.from, r.to), opts)
		if err != nil {
			return nexmark.Checksum{}, m, err
		}
		if r.join {
			j.jobs[0].AdmitJoins(weir.WithStrategy(s), weir.StepGap(r.gap), weir.PerPair(r.perPair))
		}
		type result struct {
			mg  *weir.Migration
			err error
		}
		asked := make(chan result, 1)
		timer := time.AfterFunc(time.Until(r.clock.start.Add(r.at)), func() {
			m.requested = time.Now()
			ropts := []weir.RescaleOption{weir.WithStrategy(s), weir.StepGap(r.gap), weir.PerPair(r.perPair)}
			var mg *weir.Migration
			var err error
			switch {
			case r.join:
				mg, err = r.admit(ctx, j)
			case r.leave > 0:
				mg, err = j.jobs[0].Leave(r.leave, ropts...)
			default:
				mg, err = j.jobs[0].Rescale(r.to, ropts...)
			}
			if err == nil {
				err = mg.Wait(ctx)
			}
			m.done = time.Now()
			asked <- result{mg, err}
		})
		err = j.run(ctx)
		if timer.Stop() {
			if err != nil {
				return nexmark.Checksum{}, m, err
			}
			return nexmark.Checksum{}, m, fmt.Errorf("bench rescale: the job ended before the rescale at %v; raise --duration or lower --at", r.at)
		}
		res := <-asked
		switch {
		case err != nil:
			return nexmark.Checksum{}, m, err
		case res.err != nil:
			return nexmark.Checksum{}, m, res.err
		case !res.mg.Completed():
			return nexmark.Checksum{}, m, fmt.Errorf("bench rescale: the job ended before the rescale's last step (epoch %d); raise --duration", res.mg.Last)
		}
		for _, p := range j.jobs {
			b, _ := p.MovedBytes()
			m.bytesMoved += b
			m.bytesWhole += p.WholeBytes()
		}
		m.steps = res.mg.Steps
		return j.sum, m, nil
	}
}

// admit starts the process that joins the job and returns the migration
// process 0 plans to let it in, once it has.
func (r *rescaleRun) admit(ctx context.Context, j *rescaleJob) (*weir.Migration, error) {
	if err := j.joinLater(ctx); err != nil {
		return nil, err
	}
	for {
		if mg, ok := j.jobs[0].LastJoin(); ok {
			return mg, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}
