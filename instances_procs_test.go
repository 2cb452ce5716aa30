package weir_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/transport"
)

// runningHere counts, by chain holding op, the instances that run now in
// process self of st, by its own figures.
func runningHere(st weir.JobStats, self int, op string) int {
	return running(weir.JobStats{Processes: st.Processes[self : self+1]}, op)
}

// runAll runs the processes' jobs; done gets their errors, once every
// one has ended, which are errs then.
func runAll(ctx context.Context, jobs []*weir.Job) (errs []error, done chan error) {
	errs = make([]error, len(jobs))
	done = make(chan error, 1)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() { errs[i] = j.Run(ctx) })
	}
	go func() {
		wg.Wait()
		done <- fmt.Errorf("%v", errs)
	}()
	return errs, done
}

// The instances of the keyed operators start and end with their key
// groups across processes too: a job of two processes of two workers
// each, whose keyed operators start over 1 instance, runs 1, then 4, 2,
// 3 and 1 instances of each keyed chain (counted in the processes that
// run them), rescales asked of either process, and its results are the
// plain computation's: process 1, idle after the shrink to 2, hands its
// key groups back at the shrink to 1.
func TestInstancesStartAndEndProcesses(t *testing.T) {
	in := make([]rec, 96000)
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", i%97), TS: int64(i) / 16}
	}
	nets := transport.NewLocal(2)
	jobs := make([]*weir.Job, 2)
	var wins *weir.Collect[weir.WindowResult[string, int64]]
	var out *weir.Collect[string]
	for i := range jobs {
		j, w, o := stagesJob(in, weir.Workers(2), weir.ActiveInstances(1), weir.WithNetwork(nets[i]))
		jobs[i] = j
		if i == 0 { // the sinks run on process 0
			wins, out = w, o
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	errs, done := runAll(ctx, jobs)
	counts := func(n int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		waitRunning(t, done, fmt.Sprintf("%d instances of each keyed chain running", n), func() bool {
			var c, x, s int
			for i, j := range jobs {
				st := j.Stats()
				c, x, s = c+runningHere(st, i, "count"), x+runningHere(st, i, "nth"), s+runningHere(st, i, "sum")
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d instances of the window, %d of nth and %d of sum run; want %d", c, x, s, n)
			}
			return c == n && x == n && s == n
		})
	}
	waitRunning(t, done, "reading 1000 records", func() bool { return jobs[0].Metrics().Records >= 1000 })
	counts(1)
	for k, n := range []int{4, 2, 3, 1} {
		rescaleBatched(t, ctx, jobs[k%2], n)
		counts(n)
	}
	if err := <-done; errs[0] != nil || errs[1] != nil {
		t.Fatal(err)
	}
	checkStages(t, in, wins, out)
}

// A process that runs no instance at all, its keyed ones owning no key
// group and its source's one instance in process 0, stays until a rescale
// starts its instances, and then gives its part of the plain
// computation's results; without the hold on its end it ended at once
// and its instances could not start.
func TestInstancesStartInIdleProcess(t *testing.T) {
	in := coldInput(500, 16000)
	want := coldWant(in)
	outs := make([]*weir.Collect[string], 2)
	jobs := twoProcesses(t, []weir.JobOption{weir.BatchInterval(20 * time.Millisecond), weir.ActiveInstances(2)},
		func(i int, j *weir.Job) { outs[i] = coldJob(j, in) },
		func(jobs []*weir.Job) bool { return jobs[0].Metrics().Records >= 2000 }, 0, 4, weir.WithStrategy(weir.AllAtOnce))
	checkBag(t, outs[0].Records(), bagOf(want))
	if _, kgs := jobs[0].MovedBytes(); kgs == 0 {
		t.Error("process 0 handed over no key group")
	}
}
