package weir_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/transport"
)

// wordsRun is one run of the running word count over procs processes
// whose every task has an instance on each process (the sink too).
type wordsRun struct {
	jobs []*weir.Job
	outs []*kept[wordCount]
	errs []error
	done []chan struct{}
	wg   sync.WaitGroup
}

// startWords starts procs processes of the running word count over in,
// each with opts; crash, if set, makes a process's counting fail once it
// is true.
func startWords(ctx context.Context, in []string, procs int, opts []weir.JobOption, crash []*atomic.Bool) *wordsRun {
	nets := transport.NewLocal(procs)
	r := &wordsRun{jobs: make([]*weir.Job, procs), outs: make([]*kept[wordCount], procs), errs: make([]error, procs), done: make([]chan struct{}, procs)}
	for i := range procs {
		r.done[i] = make(chan struct{})
		o := append([]weir.JobOption{weir.Workers(2), weir.BatchInterval(20 * time.Millisecond), weir.WithNetwork(nets[i])}, opts...)
		r.jobs[i] = weir.NewJob("leave-zero", o...)
		var c *atomic.Bool
		if crash != nil {
			c = crash[i]
		}
		r.outs[i] = wordCountEverywhere(r.jobs[i], in, 2*procs, c)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer close(r.done[i])
			r.errs[i] = r.jobs[i].Run(ctx)
		}()
	}
	return r
}

// await waits until process 1 has read n records, or a process has
// ended (failed, say: its error is then the test's to report).
func (r *wordsRun) await(ctx context.Context, n int64) {
	for r.jobs[1].Metrics().Records < n && ctx.Err() == nil {
		for _, d := range r.done {
			select {
			case <-d:
				return
			default:
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// all is every process's output.
func (r *wordsRun) all() []wordCount {
	var out []wordCount
	for _, o := range r.outs {
		o.mu.Lock()
		out = append(out, o.recs...)
		o.mu.Unlock()
	}
	return out
}

// kept keeps what its instances write, as Collect does, but as a plain
// output (at least once: not saved with the checkpoints), so that it may
// run in several instances in a job with checkpoints.
type kept[T any] struct {
	mu   sync.Mutex
	recs []T
}

func (k *kept[T]) Write(batch []T) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.recs = append(k.recs, batch...)
	return nil
}

func (k *kept[T]) Close() error { return nil }

// wordCountEverywhere is runningWordCount with the sink in par
// instances, so that no task runs on process 0 alone; crash, if set,
// fails the count once it is true.
func wordCountEverywhere(j *weir.Job, in []string, par int, crash *atomic.Bool) *kept[wordCount] {
	s := weir.Source(j, "words", weir.Paced[string](weir.SliceSource[string]{Records: in, BatchSize: 16}, 2500))
	c := weir.Process(weir.KeyBy(s, func(w string) string { return w }), func(k string, st *int, _ string, out []wordCount) []wordCount {
		if crash != nil && crash.Load() {
			panic("crash")
		}
		*st++
		return append(out, wordCount{k, *st})
	}, weir.Name("count"))
	out := &kept[wordCount]{}
	weir.Sink(c, out, weir.Name("out"), weir.Parallelism(par))
	return out
}

// Process 0 leaves a running job whose every task has an instance on
// each process: its key groups and source shares move to the others, it
// ends before them, and the counts are the plain count's. With
// checkpoints, those after its leave complete without it (the next
// process leads them: their stride, and process 0's empty part), and
// the job's directory is marked finished at its end.
func TestLeaveProcessZero(t *testing.T) {
	in := wordsInput(9000)
	for _, c := range []struct {
		procs, ask int
		ckpt       bool
	}{{2, 0, false}, {3, 1, true}, {2, 0, true}} {
		t.Run(fmt.Sprintf("%d-processes/asked-of-%d/checkpoints-%v", c.procs, c.ask, c.ckpt), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			dir := t.TempDir()
			var opts []weir.JobOption
			if c.ckpt {
				opts = append(opts, weir.Checkpoints(dir, 3, 3))
			}
			r := startWords(ctx, in, c.procs, opts, nil)
			r.await(ctx, 1000)
			m, err := r.jobs[c.ask].Leave(0)
			if err != nil {
				t.Fatalf("Leave(0) of process %d: %v", c.ask, err)
			}
			if len(m.Sources) != 1 || m.Moves == 0 {
				t.Errorf("the leave moves %d key groups and the shares of %v; want some, and words'", m.Moves, m.Sources)
			}
			select {
			case <-r.done[0]:
			case <-r.done[1]:
				t.Error("process 1 ended before process 0, which left")
			}
			r.wg.Wait()
			for i, err := range r.errs {
				if err != nil {
					t.Fatalf("process %d: %v", i, err)
				}
			}
			checkWordCounts(t, in, r.all())
			if !c.ckpt {
				return
			}
			if n := newestCheckpoint(dir); n < m.Leave {
				t.Errorf("the newest complete checkpoint is %d; none completed after the leave at epoch %d", n, m.Leave)
			}
			if _, err := os.Stat(filepath.Join(dir, "FINISHED")); err != nil {
				t.Errorf("the directory of the job that ran to its end is not marked finished: %v", err)
			}
		})
	}
}

// A job crashes after process 0 left it and a checkpoint without it
// completed; all its processes restart from that checkpoint (process 0
// too, which then owns nothing: the checkpoint recorded the routing in
// force), and every word's counts go on from it.
func TestLeaveProcessZeroThenCrash(t *testing.T) {
	in := wordsInput(12000)
	dir := t.TempDir()
	opts := []weir.JobOption{weir.Checkpoints(dir, 2, 3)}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	crash := []*atomic.Bool{new(atomic.Bool), new(atomic.Bool)}
	first := startWords(ctx, in, 2, opts, crash)
	first.await(ctx, 1000)
	m, err := first.jobs[1].Leave(0)
	if err != nil {
		t.Fatal(err)
	}
	<-first.done[0] // it has left
	for newestCheckpoint(dir) < m.Leave+2 && ctx.Err() == nil && first.jobs[1].Metrics().Records < int64(len(in))*3/4 {
		time.Sleep(2 * time.Millisecond)
	}
	ckpt := newestCheckpoint(dir)
	if ckpt < m.Leave {
		t.Fatalf("no checkpoint completed after the leave at epoch %d (newest %d) before most of the input was read", m.Leave, ckpt)
	}
	crash[1].Store(true)
	first.wg.Wait()
	if first.errs[0] != nil {
		t.Errorf("process 0, which left: %v", first.errs[0])
	}
	if err := first.errs[1]; err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("process 1: %v; want the crash", err)
	}
	second := startWords(ctx, in, 2, opts, nil)
	// The checkpoint recorded the routing in force, which gives process
	// 0's instances no key group: none of them runs in the second run.
	// (Only process 0's instances saved it before, so a restart fell
	// back to the first routing, which gives them half.)
	second.await(ctx, 2000)
	if n := runningHere(second.jobs[0].Stats(), 0, "count"); n != 0 {
		t.Errorf("%d instances of count run in process 0, which owned no key group at the checkpoint", n)
	}
	second.wg.Wait()
	for i, err := range second.errs {
		if err != nil {
			t.Fatalf("second run, process %d: %v", i, err)
		}
	}
	if from := second.jobs[1].Metrics().RestoredFrom; from < m.Leave {
		t.Errorf("the second run restored checkpoint %d, from before the leave at epoch %d", from, m.Leave)
	}
	// Each word's counts in the second run go on from the checkpoint's
	// without a gap or a repeat, up to its plain count.
	want := map[string]int{}
	for _, w := range in {
		want[w]++
	}
	seen := map[string]map[int]bool{}
	low, high := map[string]int{}, map[string]int{}
	for _, w := range second.all() {
		if seen[w.Key] == nil {
			seen[w.Key], low[w.Key] = map[int]bool{}, w.N
		}
		if seen[w.Key][w.N] {
			t.Fatalf("%s counted %d twice in the second run", w.Key, w.N)
		}
		seen[w.Key][w.N] = true
		low[w.Key], high[w.Key] = min(low[w.Key], w.N), max(high[w.Key], w.N)
	}
	for k, n := range want {
		if got := len(seen[k]); got == 0 || high[k] != n || high[k]-low[k]+1 != got {
			t.Errorf("%s: the second run counted from %d to %d in %d counts; want every count from its first up to %d", k, low[k], high[k], got, n)
		}
	}
}

// In an elastic job of three whose every task has an instance on each
// process, process 0 leaves, and a fourth process asks to join while it
// does: none admits it until process 0 has ended (process 0, knowing it
// leaves, does not), then process 1, now the longest present, lets it
// in from what it noted. The joiner takes key groups and shares, and
// every word's counts are the plain count's.
func TestJoinAfterProcessZeroLeft(t *testing.T) {
	in := wordsInput(20000)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := &elasticRun{slots: transport.NewLocalSlots(4), jobs: make([]*weir.Job, 4), errs: make([]error, 4)}
	outs := make([]*kept[wordCount], 4)
	opts := []weir.JobOption{weir.Workers(2), weir.BatchInterval(20 * time.Millisecond), weir.ElasticCluster(3)}
	build := func(p int) func(j *weir.Job) {
		return func(j *weir.Job) {
			outs[p] = wordCountEverywhere(j, in, 8, nil)
			j.AdmitJoins(weir.WithStrategy(weir.AllAtOnce))
		}
	}
	for p := range 3 {
		r.start(ctx, t, p, build(p), opts...)
	}
	for r.jobs[1].Metrics().Records < 1000 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	r.leaveAgain(t, 0, 0) // asked of process 0: it knows at once
	r.start(ctx, t, 3, build(3), append(opts, weir.JoinCluster())...)
	r.wait(t)
	if m, ok := r.jobs[0].LastJoin(); ok {
		t.Errorf("process 0, which was leaving, let in %+v", m)
	}
	if m, ok := r.jobs[1].LastJoin(); !ok || m.Join == 0 || m.Moves == 0 || len(m.Sources) != 1 {
		t.Errorf("process 1's join: %+v (%v); want key groups and the shares of words moved to the joiner", m, ok)
	}
	var all []wordCount
	for _, o := range outs {
		o.mu.Lock()
		all = append(all, o.recs...)
		o.mu.Unlock()
	}
	if len(outs[3].recs) == 0 {
		t.Error("the process that joined counted nothing")
	}
	checkWordCounts(t, in, all)
}

// Once process 0 has left, a rescale spreads the key groups and shares
// over the instances of the processes that stay: to fewer, then to all
// of them; one to more instances than take part is refused. The counts
// are the plain count's.
func TestRescaleAfterProcessZeroLeft(t *testing.T) {
	in := wordsInput(15000)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := startWords(ctx, in, 3, nil, nil) // 2 instances of each task on each process
	r.await(ctx, 1000)
	m, err := r.jobs[1].Leave(0)
	if err != nil {
		t.Fatal(err)
	}
	<-r.done[0]
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.jobs[2].Rescale(5); err == nil || !strings.Contains(err.Error(), "4 run on processes that take part") {
		t.Errorf("a rescale to 5 of the 4 instances that take part: %v; want it refused", err)
	}
	for _, c := range []struct{ ask, to int }{{2, 2}, {1, 4}} {
		var m *weir.Migration
		for {
			if m, err = r.jobs[c.ask].Rescale(c.to); err == nil || !strings.Contains(err.Error(), "ask again") || ctx.Err() != nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("rescale to %d after process 0 left, asked of process %d: %v", c.to, c.ask, err)
		}
		if m.Moves == 0 || len(m.Sources) != 1 {
			t.Errorf("the rescale to %d moves %d key groups and the shares of %v; want some, and words'", c.to, m.Moves, m.Sources)
		}
		if err := m.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	r.wg.Wait()
	for i, err := range r.errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	checkWordCounts(t, in, r.all())
}
