package weir_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/transport"
)

// A rescale of a job of two processes, asked of one of them, moves key
// groups between the processes (over the handover channel) and within
// them, and every keyed operator still gives the plain computation's
// results: from process 0 alone to both, asked of process 0 or of
// process 1, and from both to process 0 alone.
func TestRescaleProcesses(t *testing.T) {
	in := rescaleInput(8000)
	want := withoutTTL(rescaleModel(in)) // time-based epochs
	for _, c := range []struct {
		strat         weir.RescaleStrategy
		from, to, ask int
	}{{weir.Batched, 2, 4, 0}, {weir.Fluid, 2, 4, 1}, {weir.AllAtOnce, 4, 2, 1}} {
		t.Run(fmt.Sprintf("%v/%d-%d/asked-of-%d", c.strat, c.from, c.to, c.ask), func(t *testing.T) {
			t.Parallel()
			jobs, out := rescaleTwoProcesses(t, in, c.from, c.to, c.ask, nil, weir.WithStrategy(c.strat))
			// Key groups left process 0 for process 1, or the reverse.
			giver := 0
			if c.to < c.from {
				giver = 1
			}
			if _, kgs := jobs[giver].MovedBytes(); kgs == 0 {
				t.Errorf("process %d handed over no key group", giver)
			}
			checkOps(t, out, want)
		})
	}
}

// The same under the micro-batch strategies: each process's rounds
// follow the tables, and a process whose instances own no key group
// (the first case, before the rescale) still folds what its senders
// deposit and posts it to the owners.
func TestRescaleProcessesMicroBatch(t *testing.T) {
	in := rescaleInput(8000)
	want := withoutTTL(rescaleModel(in))
	for _, s := range []string{"prompt", "pkg"} {
		for _, c := range []struct {
			strat         weir.RescaleStrategy
			from, to, ask int
		}{{weir.Batched, 2, 4, 0}, {weir.AllAtOnce, 4, 2, 1}} {
			t.Run(fmt.Sprintf("%s/%v/%d-%d", s, c.strat, c.from, c.to), func(t *testing.T) {
				t.Parallel()
				_, out := rescaleTwoProcesses(t, in, c.from, c.to, c.ask, []weir.JobOption{weir.Partitioning(s)}, weir.WithStrategy(c.strat))
				checkOps(t, out, want)
			})
		}
	}
}

// A process of a job partitioned by prompt or pkg cannot leave it: every
// process takes part in every round. The leave is refused while the job
// runs, and the job goes on to its end with the plain results.
func TestLeaveRefusedMicroBatch(t *testing.T) {
	in := rescaleInput(4000)
	want := withoutTTL(rescaleModel(in))
	for _, s := range []string{"prompt", "pkg"} {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			nets := transport.NewLocal(2)
			jobs := make([]*weir.Job, 2)
			outs := make([]*weir.Collect[rsOut], 2)
			errs := make([]error, 2)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var wg sync.WaitGroup
			for i := range jobs {
				jobs[i] = weir.NewJob("leave-micro", weir.Workers(2), weir.BatchInterval(20*time.Millisecond), weir.Partitioning(s), weir.WithNetwork(nets[i]))
				outs[i] = rescaleOpsAt(jobs[i], in, 2500, nil)
				wg.Go(func() { errs[i] = jobs[i].Run(ctx) })
			}
			for jobs[0].Metrics().Records < 500 && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
			if _, err := jobs[0].Leave(1); err == nil || !strings.Contains(err.Error(), "runs its rounds in every process") {
				t.Errorf("Leave(1) = %v; want the refusal", err)
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("process %d: %v", i, err)
				}
			}
			checkOps(t, outs[0].Records(), want)
		})
	}
}

// rescaleTwoProcesses runs rescaleOps over in as a job of two processes,
// with two workers each and the keyed operators over from instances
// (instances 0 and 1 run on process 0), with opts, asks process ask to
// rescale it to instances to with ropts once 1000 records are read, and
// returns the processes and process 0's outputs once the job ended.
func rescaleTwoProcesses(t *testing.T, in []rec, from, to, ask int, opts []weir.JobOption, ropts ...weir.RescaleOption) ([]*weir.Job, []rsOut) {
	t.Helper()
	return rescaleTwoWaited(t, in, from, to, ask, opts, nil, ropts...)
}

// rescaleTwoWaited is rescaleTwoProcesses that calls waited (if set) with
// the migration and the processes once Wait returned.
func rescaleTwoWaited(t *testing.T, in []rec, from, to, ask int, opts []weir.JobOption, waited func(*weir.Migration, []*weir.Job), ropts ...weir.RescaleOption) ([]*weir.Job, []rsOut) {
	t.Helper()
	outs := make([]*weir.Collect[rsOut], 2)
	// 2500 records a second: the rescale takes force 1.5 s after it is
	// asked, well before the input ends.
	jobs := twoProcessesWaited(t, append([]weir.JobOption{weir.BatchInterval(20 * time.Millisecond), weir.ActiveInstances(from)}, opts...),
		func(i int, j *weir.Job) { outs[i] = rescaleOpsAt(j, in, 2500, nil) },
		func(jobs []*weir.Job) bool { return jobs[0].Metrics().Records >= 1000 }, ask, to, waited, ropts...)
	if n := len(outs[1].Records()); n != 0 {
		t.Errorf("process 1's sink got %d records; sinks run on process 0", n)
	}
	if late := jobs[0].Metrics().Late; late != 0 {
		t.Errorf("%d late records", late)
	}
	return jobs, outs[0].Records()
}

// twoProcesses runs a job of two processes of two workers each, with
// opts, whose operators build adds to process i's job, asks process ask
// to rescale it to instances to with ropts once ready says so, and
// returns the processes once the job ended.
func twoProcesses(t *testing.T, opts []weir.JobOption, build func(i int, j *weir.Job), ready func([]*weir.Job) bool, ask, to int, ropts ...weir.RescaleOption) []*weir.Job {
	t.Helper()
	return twoProcessesWaited(t, opts, build, ready, ask, to, nil, ropts...)
}

// twoProcessesWaited is twoProcesses that calls waited (if set) with the
// migration and the processes once Wait returned.
func twoProcessesWaited(t *testing.T, opts []weir.JobOption, build func(i int, j *weir.Job), ready func([]*weir.Job) bool, ask, to int,
	waited func(*weir.Migration, []*weir.Job), ropts ...weir.RescaleOption) []*weir.Job {
	t.Helper()
	opts = append([]weir.JobOption{weir.Workers(2)}, opts...)
	nets := transport.NewLocal(2)
	jobs := make([]*weir.Job, 2)
	errs := make([]error, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i := range jobs {
		jobs[i] = weir.NewJob("rescale-procs", append(slices.Clone(opts), weir.WithNetwork(nets[i]))...)
		build(i, jobs[i])
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = jobs[i].Run(ctx)
		}()
	}
	for !ready(jobs) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	m, err := jobs[ask].Rescale(to, ropts...)
	if err != nil {
		t.Errorf("Rescale(%d) of process %d: %v", to, ask, err)
	} else if err := m.Wait(ctx); err != nil {
		t.Errorf("waiting for the rescale: %v", err)
	} else if waited != nil {
		waited(m, jobs)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	return jobs
}
