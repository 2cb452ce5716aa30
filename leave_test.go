package weir_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/transport"
)

// leaveRun is one run of a job of several processes over NewLocal.
type leaveRun struct {
	jobs  []*weir.Job
	outs  []*weir.Collect[rsOut]
	errs  []error
	ended []time.Time
	done  []chan struct{} // closed as each process's Run returns
	wg    sync.WaitGroup
}

// startLeave starts procs processes of the rescaleOps job over in, each
// with opts and mid (see rescaleOpsAt; mid runs on process 0).
func startLeave(ctx context.Context, in []rec, procs int, opts []weir.JobOption, mid func(weir.Stream[rec]) weir.Stream[rec]) *leaveRun {
	return startEach(ctx, in, procs, func(int) []weir.JobOption { return opts }, mid)
}

// startEach is startLeave with process i's options opts(i).
func startEach(ctx context.Context, in []rec, procs int, opts func(i int) []weir.JobOption, mid func(weir.Stream[rec]) weir.Stream[rec]) *leaveRun {
	nets := transport.NewLocal(procs)
	r := &leaveRun{jobs: make([]*weir.Job, procs), outs: make([]*weir.Collect[rsOut], procs), errs: make([]error, procs),
		ended: make([]time.Time, procs), done: make([]chan struct{}, procs)}
	for i := range procs {
		r.done[i] = make(chan struct{})
		o := append([]weir.JobOption{weir.Workers(2), weir.BatchInterval(20 * time.Millisecond), weir.WithNetwork(nets[i])}, opts(i)...)
		r.jobs[i] = weir.NewJob("leave", o...)
		r.outs[i] = rescaleOpsAt(r.jobs[i], in, 2500, mid)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.errs[i] = r.jobs[i].Run(ctx)
			r.ended[i] = time.Now()
			close(r.done[i])
		}()
	}
	return r
}

// await waits until process 0 has read n records.
func (r *leaveRun) await(ctx context.Context, n int64) {
	for r.jobs[0].Metrics().Records < n && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
}

// A process of a running job leaves it: its key groups move to the
// processes that stay, its instances end, its Run returns nil before the
// others', and every keyed operator still gives the plain computation's
// results. Asked of the leaving process or of another one, in a job of
// two and of three processes, under every strategy, with and without
// checkpoints (which then complete after the leave, without the leaving
// process's part).
func TestLeaveProcess(t *testing.T) {
	in := rescaleInput(8000)
	want := withoutTTL(rescaleModel(in))
	for _, c := range []struct {
		procs, leave, ask int
		strat             weir.RescaleStrategy
		ckpt              bool
	}{{2, 1, 1, weir.Batched, false}, {2, 1, 0, weir.Fluid, false}, {3, 2, 0, weir.AllAtOnce, false},
		{3, 1, 2, weir.Batched, false}, {2, 1, 0, weir.Batched, true}, {3, 1, 1, weir.Fluid, true}} {
		t.Run(fmt.Sprintf("%d-processes/leave-%d/asked-of-%d/%v/checkpoints-%v", c.procs, c.leave, c.ask, c.strat, c.ckpt), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var opts []weir.JobOption
			dir := t.TempDir()
			if c.ckpt {
				opts = append(opts, weir.Checkpoints(dir, 3, 3))
			}
			r := startLeave(ctx, in, c.procs, opts, nil)
			r.await(ctx, 1000)
			m, err := r.jobs[c.ask].Leave(c.leave, weir.WithStrategy(c.strat))
			if err != nil {
				t.Fatalf("Leave(%d) of process %d: %v", c.leave, c.ask, err)
			}
			if m.Leave == 0 || m.Moves == 0 {
				t.Errorf("the leave moves %d key groups, from epoch %d", m.Moves, m.Leave)
			}
			r.wg.Wait()
			for i, err := range r.errs {
				if err != nil {
					t.Fatalf("process %d: %v", i, err)
				}
			}
			t.Logf("the leaving process ended %v before process 0", r.ended[0].Sub(r.ended[c.leave]))
			if !r.ended[c.leave].Before(r.ended[0]) {
				t.Errorf("the leaving process ended at %v, not before process 0 (%v)", r.ended[c.leave], r.ended[0])
			}
			if _, kgs := r.jobs[c.leave].MovedBytes(); kgs == 0 {
				t.Errorf("process %d left without handing a key group over", c.leave)
			}
			if late := r.jobs[0].Metrics().Late; late != 0 {
				t.Errorf("%d late records", late)
			}
			if n := newestCheckpoint(dir); c.ckpt && n < m.Leave {
				t.Errorf("the newest complete checkpoint is %d; none completed after the leave at epoch %d", n, m.Leave)
			}
			checkOps(t, r.outs[0].Records(), want)
		})
	}
}

// A job whose process left it crashes after a checkpoint taken without
// that process completed; all its processes restart from it (the one that
// left too, which then owns nothing), and every result is exact.
func TestLeaveThenCrash(t *testing.T) {
	in := rescaleInput(16000)
	want := withoutTTL(rescaleModel(in))
	dir := t.TempDir()
	opts := []weir.JobOption{weir.Checkpoints(dir, 2, 3)}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var crash atomic.Bool
	first := startLeave(ctx, in, 3, opts, crashOn(&crash))
	first.await(ctx, 1000)
	m, err := first.jobs[0].Leave(1)
	if err != nil {
		t.Fatal(err)
	}
	for newestCheckpoint(dir) < m.Leave+2 && ctx.Err() == nil && first.jobs[0].Metrics().Records < int64(len(in)) {
		time.Sleep(2 * time.Millisecond)
	}
	if n := newestCheckpoint(dir); n < m.Leave {
		t.Fatalf("no checkpoint completed after the leave at epoch %d (newest %d) before the input ended", m.Leave, n)
	}
	<-first.done[1] // it has left
	crash.Store(true)
	first.wg.Wait()
	if first.errs[1] != nil {
		t.Errorf("the process that left: %v", first.errs[1])
	}
	if err := first.errs[0]; err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("process 0: %v; want the crash", err)
	}
	began := time.Now()
	second := startLeave(ctx, in, 3, opts, crashOn(new(atomic.Bool)))
	second.wg.Wait()
	t.Logf("the second run took %v", time.Since(began))
	for i, err := range second.errs {
		if err != nil {
			t.Fatalf("second run, process %d: %v", i, err)
		}
	}
	if second.jobs[0].Metrics().RestoredFrom < m.Leave {
		t.Errorf("the second run restored checkpoint %d, from before the leave at epoch %d", second.jobs[0].Metrics().RestoredFrom, m.Leave)
	}
	checkOps(t, second.outs[0].Records(), want)
}

// Leave refuses what it cannot carry out, saying why, and the job runs on
// to the same results.
func TestLeaveRefused(t *testing.T) {
	in := rescaleInput(3000)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nets := transport.NewLocal(2)
	r := &leaveRun{jobs: make([]*weir.Job, 2), outs: make([]*weir.Collect[rsOut], 2), errs: make([]error, 2)}
	for i := range 2 {
		r.jobs[i] = weir.NewJob("leave-refused", weir.Workers(2), weir.BatchInterval(20*time.Millisecond), weir.WithNetwork(nets[i]))
		r.outs[i] = rescaleOpsAt(r.jobs[i], in, 2000, nil)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.errs[i] = r.jobs[i].Run(ctx)
		}()
	}
	r.await(ctx, 500)
	for _, c := range []struct {
		p    int
		want string
	}{{2, "there is no process 2"}, {-1, "there is no process -1"}, {0, "runs only on process 0"}} {
		if _, err := r.jobs[1].Leave(c.p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Leave(%d) = %v; want an error saying %q", c.p, err, c.want)
		}
	}
	r.wg.Wait()
	for i, err := range r.errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	checkOps(t, r.outs[0].Records(), withoutTTL(rescaleModel(in)))

	one := weir.NewJob("leave-alone")
	weir.Sink(weir.Source(one, "src", weir.SliceSource[rec]{Records: in}), &weir.Collect[rec]{})
	if _, err := one.Leave(1); err == nil {
		t.Error("Leave on a job that does not run was not refused")
	}
}

// A process that reads shares of a source leaves: they move to the
// instances that stay, which read on from where it stopped, and every
// record is counted once.
func TestLeaveWithSources(t *testing.T) {
	in := wordsInput(9000)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nets := transport.NewLocal(3)
	jobs := make([]*weir.Job, 3)
	outs := make([]*weir.Collect[wordCount], 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range jobs {
		jobs[i] = weir.NewJob("leave-sources", weir.Workers(2), weir.BatchInterval(20*time.Millisecond), weir.WithNetwork(nets[i]))
		outs[i] = runningWordCount(jobs[i], in)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = jobs[i].Run(ctx)
		}()
	}
	for jobs[0].Metrics().Records < 1000 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	m, err := jobs[0].Leave(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Sources) != 1 {
		t.Errorf("the leave moves the shares of %v; want those of words", m.Sources)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	checkWordCounts(t, in, outs[0].Records())
}

type wordCount struct {
	Key string
	N   int
}

// wordsInput is n words of 97 distinct ones.
func wordsInput(n int) []string {
	in := make([]string, n)
	for i := range in {
		in[i] = fmt.Sprintf("w%d", i%97)
	}
	return in
}

// runningWordCount adds to j a running count of in's words, read on every
// instance at 2500 records a second in all, each count out to one sink
// instance (process 0's, in a job of several).
func runningWordCount(j *weir.Job, in []string) *weir.Collect[wordCount] {
	s := weir.Source(j, "words", weir.Paced[string](weir.SliceSource[string]{Records: in, BatchSize: 16}, 2500))
	c := weir.Process(weir.KeyBy(s, func(w string) string { return w }), func(k string, st *int, _ string, out []wordCount) []wordCount {
		*st++
		return append(out, wordCount{k, *st})
	}, weir.Name("count"))
	out := &weir.Collect[wordCount]{}
	weir.Sink(c, out, weir.Name("out"), weir.Parallelism(1))
	return out
}

// checkWordCounts checks the counts out against the plain count of in:
// one count per record, each word's last count its number.
func checkWordCounts(t *testing.T, in []string, got []wordCount) {
	t.Helper()
	last := map[string]int{}
	for _, w := range got {
		last[w.Key] = max(last[w.Key], w.N)
	}
	want := map[string]int{}
	for _, w := range in {
		want[w]++
	}
	for k, c := range want {
		if last[k] != c {
			t.Errorf("%s counted %d, want %d", k, last[k], c)
		}
	}
	if len(got) != len(in) {
		t.Errorf("%d counts out, want one per record, %d", len(got), len(in))
	}
}
