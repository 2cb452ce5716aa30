package weir_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/transport"
)

// splitsProcs runs the counts of in over two processes of two workers
// each, its sources starting on their first active instances, calls move
// on one of the jobs once the sources have read a sixth of the input,
// and waits for the migration it returns; it returns the jobs, what each
// process's source instances had read when the move was over, and the
// counts (process 0's sink).
func splitsProcs(t *testing.T, in splitsInput, active int, move func(jobs []*weir.Job) (*weir.Migration, error)) ([]*weir.Job, []map[int]int64, []weir.WindowResult[string, int64]) {
	t.Helper()
	nets := transport.NewLocal(2)
	jobs := make([]*weir.Job, 2)
	outs := make([]*weir.Collect[weir.WindowResult[string, int64]], 2)
	errs := make([]error, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	// Process 0 runs the sink, so it completes the epochs (process 1
	// completes none, and its Migration.Wait waits for the job's end).
	var completed atomic.Uint64
	for i := range jobs {
		jobs[i] = weir.NewJob("splits-procs", weir.Workers(2), weir.BatchInterval(20*time.Millisecond),
			weir.ActiveInstances(active), weir.WithNetwork(nets[i]), weir.OnEpoch(func(s weir.EpochStats) {
				if i == 0 && !s.Final {
					completed.Store(s.Epoch)
				}
			}))
		// 2500 records a second: the move takes force 1.5 s after it is
		// asked, well before the input ends.
		outs[i] = splitsCounts(in.source(jobs[i], 2500))
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = jobs[i].Run(ctx)
		}()
	}
	for jobs[0].Metrics().Records < int64(len(in.recs)/6) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	var before []map[int]int64
	m, err := move(jobs)
	if err != nil {
		t.Errorf("moving the shares: %v", err)
	} else {
		for completed.Load() < m.Last && ctx.Err() == nil {
			time.Sleep(2 * time.Millisecond)
		}
	}
	for p, j := range jobs {
		before = append(before, sourceReads(j.Stats(), "src", p))
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	if n := len(outs[1].Records()); n != 0 {
		t.Errorf("process 1's sink got %d records; sinks run on process 0", n)
	}
	if got := jobs[0].Metrics().Records; got != int64(len(in.recs)) {
		t.Errorf("%d records read; want %d", got, len(in.recs))
	}
	if late := jobs[0].Metrics().Late; late != 0 {
		t.Errorf("%d late records", late)
	}
	return jobs, before, outs[0].Records()
}

// checkReaders is checkReads over both processes' source instances
// (instances 0 and 1 run on process 0, 2 and 3 on process 1).
func checkReaders(t *testing.T, jobs []*weir.Job, before []map[int]int64, active int, readers []int, total int) {
	t.Helper()
	b, a := map[int]int64{}, map[int]int64{}
	for p, j := range jobs {
		for i, n := range before[p] {
			b[i] = n
		}
		for i, n := range sourceReads(j.Stats(), "src", p) {
			a[i] = n
		}
	}
	checkReads(t, b, a, 4, active, readers, total)
}

// A rescale of a job of two processes, asked of one of them, moves the
// sources' shares between the processes with the key groups: from
// process 0 alone to both, from both to one instance, from both to
// process 0 alone; every record is read once, and after the move only
// the instances with a share read.
func TestSplitsProcesses(t *testing.T) {
	inputs := splitsInputs(t, 8000)
	for _, c := range []struct {
		in            splitsInput
		from, to, ask int
	}{{inputs[0], 2, 4, 1}, {inputs[1], 4, 1, 0}, {inputs[2], 4, 2, 1}} {
		t.Run(fmt.Sprintf("%s/%d-%d/asked-of-%d", c.in.name, c.from, c.to, c.ask), func(t *testing.T) {
			jobs, before, got := splitsProcs(t, c.in, c.from, func(jobs []*weir.Job) (*weir.Migration, error) {
				m, err := jobs[c.ask].Rescale(c.to, weir.WithStrategy(weir.AllAtOnce))
				if err == nil && !slices.Equal(m.Sources, []string{"src"}) {
					t.Errorf("the rescale moves the shares of %q; want src's", m.Sources)
				}
				return m, err
			})
			checkReaders(t, jobs, before, c.from, firstN(c.to), len(c.in.recs))
			checkCounts(t, got, plainCounts(c.in.recs))
		})
	}
}

// The shares of a source may move to any instances, in any order: here
// to process 1's alone, asked of process 0, while the keyed operators
// stay where they are.
func TestSplitsToInstances(t *testing.T) {
	in := splitsInputs(t, 8000)[0]
	readers := []int{3, 2}
	jobs, before, got := splitsProcs(t, in, 4, func(jobs []*weir.Job) (*weir.Migration, error) {
		return weir.MoveSplits(jobs[0], "src", readers)
	})
	checkReaders(t, jobs, before, 4, readers, len(in.recs))
	if b, _ := jobs[0].MovedBytes(); b != 0 {
		t.Errorf("process 0 handed over %d bytes of keyed state; only the shares move", b)
	}
	checkCounts(t, got, plainCounts(in.recs))
}

func firstN(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// A job of two processes whose sources moved from 4 shares to 2 (onto
// process 0) stops cleanly at a checkpoint after the move and resumes
// from it with the shares it recorded: process 1's instances read
// nothing, and the counts are the plain loop's.
func TestSplitsStopProcesses(t *testing.T) {
	in := splitsInputs(t, 8000)[0]
	dir := t.TempDir()
	run := func(move bool) ([]*weir.Job, []error, []weir.WindowResult[string, int64]) {
		nets := transport.NewLocal(2)
		jobs := make([]*weir.Job, 2)
		errs := make([]error, 2)
		var out *weir.Collect[weir.WindowResult[string, int64]]
		var completed atomic.Uint64
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var wg sync.WaitGroup
		for i := range jobs {
			jobs[i] = weir.NewJob("splits-stop", weir.Workers(2), weir.BatchInterval(20*time.Millisecond),
				weir.Checkpoints(dir, 5, 3), weir.WithNetwork(nets[i]), weir.OnEpoch(func(s weir.EpochStats) {
					if i == 0 && !s.Final {
						completed.Store(s.Epoch)
					}
				}))
			if o := splitsCounts(in.source(jobs[i], 2500)); i == 0 {
				out = o
			}
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = jobs[i].Run(ctx) }()
		}
		if move {
			for jobs[0].Metrics().Records < int64(len(in.recs)/6) && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
			m, err := jobs[1].Rescale(2, weir.WithStrategy(weir.AllAtOnce))
			if err != nil {
				t.Fatal(err)
			}
			// Well past the move, so that the checkpoint the job stops at
			// follows it.
			for completed.Load() < m.Last+10 && ctx.Err() == nil {
				time.Sleep(2 * time.Millisecond)
			}
			jobs[0].Stop()
		}
		wg.Wait()
		return jobs, errs, out.Records()
	}
	jobs, errs, _ := run(true)
	for i, err := range errs {
		if !errors.Is(err, weir.ErrStopped) {
			t.Fatalf("process %d: %v; want ErrStopped", i, err)
		}
	}
	at := jobs[0].Metrics().StoppedAt
	jobs, errs, got := run(false)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("resumed run: process %d: %v", i, err)
		}
	}
	if from := jobs[0].Metrics().RestoredFrom; from != at {
		t.Errorf("resumed from checkpoint %d; the job stopped at %d", from, at)
	}
	if n := jobs[0].Metrics().Records; n != int64(len(in.recs)) {
		t.Errorf("%d records read, before the checkpoint and after; want %d", n, len(in.recs))
	}
	reads := sourceReads(jobs[1].Stats(), "src", 1)
	if reads[2]+reads[3] != 0 {
		t.Errorf("process 1's instances read %d and %d records; the checkpoint has 2 shares, on process 0", reads[2], reads[3])
	}
	checkCounts(t, got, plainCounts(in.recs))
}
