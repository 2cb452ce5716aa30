package weir_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/transport"
)

// refusedRescale runs j until its sources have read some records, asks
// it to rescale to instances with opts, and returns the error (the job
// runs to its end either way).
func refusedRescale(t *testing.T, j *weir.Job, instances int, opts ...weir.RescaleOption) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- j.Run(ctx) }()
	for j.Metrics().Records == 0 && ctx.Err() == nil {
		time.Sleep(2 * time.Millisecond)
	}
	_, err := j.Rescale(instances, opts...)
	if runErr := <-done; runErr != nil {
		t.Fatalf("Run: %v", runErr)
	}
	return err
}

// refuseJob counts per key and window on 4 workers, slowly enough that
// the job still runs when it is asked to rescale.
func refuseJob(opts ...weir.JobOption) *weir.Job {
	in := rescaleInput(2000)
	j := weir.NewJob("refuse", append([]weir.JobOption{weir.Workers(4), weir.BatchInterval(20 * time.Millisecond)}, opts...)...)
	s := weir.Source(j, "src", weir.Paced[rec](weir.SliceSource[rec]{Records: in, BatchSize: 32}, 8000), weir.Parallelism(1))
	timed := weir.EventTime(s, recTS, 10*time.Millisecond)
	weir.Sink(weir.Count(weir.Window(weir.KeyBy(timed, recKey), weir.Tumbling(50*time.Millisecond))), &weir.Collect[weir.WindowResult[string, int64]]{})
	return j
}

func wantRefusal(t *testing.T, err error, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one naming %q", words)
	}
	t.Log(err)
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %q", err, w)
		}
	}
}

// Rescales that cannot work are refused with an error that says why, and
// the job runs on unharmed.
func TestRescaleRefused(t *testing.T) {
	t.Run("before Run", func(t *testing.T) {
		_, err := refuseJob().Rescale(2)
		wantRefusal(t, err, "not running")
	})
	for n, words := range map[int][]string{0: {"to 0 instances", "at least 1"}, -1: {"to -1 instances", "at least 1"}, 5: {"to 5 instances", "run 4 instances"}} {
		t.Run(fmt.Sprintf("to %d instances", n), func(t *testing.T) {
			wantRefusal(t, refusedRescale(t, refuseJob(weir.ActiveInstances(2)), n), words...)
		})
	}
	t.Run("ActiveInstances(-1)", func(t *testing.T) {
		j := refuseJob(weir.ActiveInstances(-1))
		wantRefusal(t, runErr(t, j), "ActiveInstances(-1)")
	})
	t.Run("fluid over 8192 key groups", func(t *testing.T) {
		// 6144 steps of 8192 key groups: more than migrate.MaxStepOwners.
		err := refusedRescale(t, refuseJob(weir.ActiveInstances(2), weir.KeyGroups(8192)), 4, weir.WithStrategy(weir.Fluid))
		wantRefusal(t, err, "6144 steps cannot be announced", "fewer steps")
	})
	t.Run("ordered", func(t *testing.T) {
		wantRefusal(t, refusedRescale(t, refuseJob(weir.Ordered()), 2), "ordered")
	})
	t.Run("no keyed operator, no source that moves", func(t *testing.T) {
		// Under count-based epochs a source instance that reads nothing
		// would end no epoch, so the sources keep their shares.
		j := weir.NewJob("unkeyed", weir.Workers(2), weir.EpochRecords(100))
		s := weir.Source(j, "src", weir.Paced[rec](weir.SliceSource[rec]{Records: rescaleInput(2000), BatchSize: 32}, 8000))
		weir.Sink(weir.Map(s, recKey), &weir.Collect[string]{})
		wantRefusal(t, refusedRescale(t, j, 1), "neither keyed operators nor sources")
	})
	t.Run("count-based epochs over processes", func(t *testing.T) {
		nets := transport.NewLocal(2)
		jobs := make([]*weir.Job, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for i := range jobs {
			jobs[i] = refuseJob(weir.Workers(2), weir.EpochRecords(100), weir.WithNetwork(nets[i]))
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = jobs[i].Run(ctx)
			}()
		}
		ended := make(chan struct{})
		go func() {
			wg.Wait()
			close(ended)
		}()
		// Process 1 runs a little after process 0 starts reading.
		var err error
		for {
			_, err = jobs[1].Rescale(2)
			if err == nil || !strings.Contains(err.Error(), "not running") {
				break
			}
			select {
			case <-ended:
			case <-time.After(2 * time.Millisecond):
				continue
			}
			break
		}
		<-ended
		for i, err := range errs {
			if err != nil {
				t.Fatalf("process %d: %v", i, err)
			}
		}
		wantRefusal(t, err, "count-based epochs")
	})
}
