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

// elasticRun is an elastic job over in-process slots: the first processes
// start it, others join while it runs.
type elasticRun struct {
	slots *transport.LocalSlots
	jobs  []*weir.Job
	errs  []error
	wg    sync.WaitGroup
	// ran holds, per slot, a channel closed once its last process's Run
	// returned.
	ran map[int]chan struct{}
}

// start runs process p of the job that build makes, with opts.
func (r *elasticRun) start(ctx context.Context, t *testing.T, p int, build func(j *weir.Job), opts ...weir.JobOption) {
	t.Helper()
	nw, err := r.slots.Join(p, nil)
	if err != nil {
		t.Fatalf("slot %d: %v", p, err)
	}
	r.jobs[p] = weir.NewJob("join", append(opts, weir.WithNetwork(nw))...)
	build(r.jobs[p])
	if r.ran == nil {
		r.ran = map[int]chan struct{}{}
	}
	ran, job := make(chan struct{}), r.jobs[p]
	r.ran[p] = ran
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(ran)
		r.errs[p] = job.Run(ctx)
	}()
}

func (r *elasticRun) wait(t *testing.T) {
	t.Helper()
	r.wg.Wait()
	for p, err := range r.errs {
		if err != nil {
			t.Errorf("process %d: %v", p, err)
		}
	}
}

// wordCountRun starts the two members of an elastic word count over in,
// built by count, over slots in-process slots, and waits until process 0
// read 1000 records. outs holds each slot's (last process's) output.
type wordCountRun struct {
	*elasticRun
	outs  []*weir.Collect[wordCount]
	build func(p int) func(j *weir.Job)
	opts  []weir.JobOption
}

func startWordCount(ctx context.Context, t *testing.T, slots int, count func(j *weir.Job) *weir.Collect[wordCount]) *wordCountRun {
	t.Helper()
	w := &wordCountRun{elasticRun: &elasticRun{slots: transport.NewLocalSlots(slots), jobs: make([]*weir.Job, slots), errs: make([]error, slots)},
		outs: make([]*weir.Collect[wordCount], slots),
		opts: []weir.JobOption{weir.Workers(2), weir.BatchInterval(20 * time.Millisecond), weir.ElasticCluster(2)}}
	w.build = func(p int) func(j *weir.Job) {
		return func(j *weir.Job) { w.outs[p] = count(j) }
	}
	for p := range 2 {
		w.start(ctx, t, p, w.build(p), w.opts...)
	}
	for w.jobs[0].Metrics().Records < 1000 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	return w
}

// leaveSlot makes process p leave (asked of asker) and waits for its Run
// to return nil.
func (r *elasticRun) leaveSlot(t *testing.T, asker, p int) {
	t.Helper()
	r.leaveAgain(t, asker, p)
	<-r.ran[p]
	if err := r.errs[p]; err != nil {
		t.Fatalf("the first process of slot %d: %v", p, err)
	}
}

// A process joins a running elastic job of two: it takes key groups of
// every keyed operator (windows of three kinds, rankings, joins, timers,
// process state) while the job runs, and every result equals the plain
// computation's. With checkpoints, those taken after the join complete
// with its part. The joiner may leave again once it holds key groups.
func TestJoinProcess(t *testing.T) {
	in := rescaleInput(8000)
	want := withoutTTL(rescaleModel(in))
	for _, c := range []struct {
		strat       weir.RescaleStrategy
		ckpt, leave bool
	}{{weir.Batched, false, false}, {weir.Fluid, true, false}, {weir.AllAtOnce, false, false}, {weir.Batched, false, true}} {
		ckpt := c.ckpt
		t.Run(fmt.Sprintf("%v/checkpoints-%v/then-leaves-%v", c.strat, c.ckpt, c.leave), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			dir := t.TempDir()
			opts := []weir.JobOption{weir.Workers(2), weir.BatchInterval(20 * time.Millisecond), weir.ElasticCluster(2)}
			if ckpt {
				opts = append(opts, weir.Checkpoints(dir, 3, 3))
			}
			r := &elasticRun{slots: transport.NewLocalSlots(3), jobs: make([]*weir.Job, 3), errs: make([]error, 3)}
			var out *weir.Collect[rsOut]
			for p := range 2 {
				r.start(ctx, t, p, func(j *weir.Job) {
					o := rescaleOpsAt(j, in, 2500, nil)
					if p == 0 {
						out = o
						j.AdmitJoins(weir.WithStrategy(c.strat))
					}
				}, opts...)
			}
			for r.jobs[0].Metrics().Records < 1000 && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
			r.start(ctx, t, 2, func(j *weir.Job) { rescaleOpsAt(j, in, 2500, nil) }, append(opts, weir.JoinCluster())...)
			if c.leave {
				// Once the joiner holds key groups, it leaves again.
				for r.movedOut() == 0 && ctx.Err() == nil {
					time.Sleep(2 * time.Millisecond)
				}
				r.leaveAgain(t, 1, 2)
			}
			r.wait(t)
			if m, ok := r.jobs[0].LastJoin(); !ok || m.Join == 0 || m.Moves == 0 || c.strat == weir.AllAtOnce && m.Steps != 1 || c.strat == weir.Fluid && m.Steps != m.Moves {
				t.Errorf("process 0's join: %+v (%v); want key groups moved in %v steps", m, ok, c.strat)
			}
			_, kg0 := r.jobs[0].MovedBytes()
			_, kg1 := r.jobs[1].MovedBytes()
			if kg0+kg1 == 0 {
				t.Error("no key group moved to the process that joined")
			}
			if late := r.jobs[0].Metrics().Late; late != 0 {
				t.Errorf("%d late records", late)
			}
			checkOps(t, out.Records(), want)
		})
	}
}

// A process joins a running elastic job whose source reads on every
// instance: the readers' shares spread to its instances too, and every
// record is counted once.
func TestJoinWithSources(t *testing.T) {
	in := wordsInput(9000)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := startWordCount(ctx, t, 3, func(j *weir.Job) *weir.Collect[wordCount] { return runningWordCount(j, in) })
	r.start(ctx, t, 2, r.build(2), append(r.opts, weir.JoinCluster())...)
	r.wait(t)
	if got := r.jobs[2].Metrics().Records; got == 0 {
		t.Error("the process that joined read no record")
	}
	checkWordCounts(t, in, r.outs[0].Records())
}

// A job that a process joined crashes after checkpoints taken with the
// joiner's part; the processes that started it restart from the newest
// one without it (the joiner's key groups come back to their instances,
// by key group), and every result is exact.
func TestJoinThenCrash(t *testing.T) {
	in := rescaleInput(12000)
	want := withoutTTL(rescaleModel(in))
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	opts := []weir.JobOption{weir.Workers(2), weir.BatchInterval(20 * time.Millisecond), weir.ElasticCluster(2), weir.Checkpoints(dir, 2, 3)}
	var crash atomic.Bool
	first := &elasticRun{slots: transport.NewLocalSlots(3), jobs: make([]*weir.Job, 3), errs: make([]error, 3)}
	build := func(j *weir.Job) { rescaleOpsAt(j, in, 2500, crashOn(&crash)) }
	for p := range 2 {
		first.start(ctx, t, p, build, opts...)
	}
	for first.jobs[0].Metrics().Records < 1000 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	first.start(ctx, t, 2, build, append(opts, weir.JoinCluster())...)
	moved := func() int64 {
		_, a := first.jobs[0].MovedBytes()
		_, b := first.jobs[1].MovedBytes()
		return a + b
	}
	for moved() == 0 && ctx.Err() == nil && first.jobs[0].Metrics().Records < int64(len(in)) {
		time.Sleep(2 * time.Millisecond)
	}
	after := newestCheckpoint(dir)
	for newestCheckpoint(dir) < after+4 && ctx.Err() == nil && first.jobs[0].Metrics().Records < int64(len(in)) {
		time.Sleep(2 * time.Millisecond)
	}
	if moved() == 0 || newestCheckpoint(dir) < after+4 {
		t.Fatalf("the input ended before key groups moved to the joiner (%d) and checkpoints completed after (newest %d, %d then)", moved(), newestCheckpoint(dir), after)
	}
	crash.Store(true)
	first.wg.Wait()
	if err := first.errs[0]; err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("process 0: %v; want the crash", err)
	}
	second := &elasticRun{slots: transport.NewLocalSlots(3), jobs: make([]*weir.Job, 3), errs: make([]error, 3)}
	var out *weir.Collect[rsOut]
	for p := range 2 {
		second.start(ctx, t, p, func(j *weir.Job) {
			o := rescaleOpsAt(j, in, 2500, crashOn(new(atomic.Bool)))
			if p == 0 {
				out = o
			}
		}, opts...)
	}
	second.wait(t)
	if from := second.jobs[0].Metrics().RestoredFrom; from <= after {
		t.Errorf("the second run restored checkpoint %d, not one taken after the key groups moved to the joiner (after %d)", from, after)
	}
	checkOps(t, out.Records(), want)
}
