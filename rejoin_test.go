package weir_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/transport"
)

// movedOut is the key groups processes 0 and 1 have handed over so far.
func (r *elasticRun) movedOut() int64 {
	_, a := r.jobs[0].MovedBytes()
	_, b := r.jobs[1].MovedBytes()
	return a + b
}

// leaveAgain asks process asker to make process p leave, retrying while
// a reconfiguration is under way.
func (r *elasticRun) leaveAgain(t *testing.T, asker, p int) {
	t.Helper()
	var err error
	for range 300 {
		if _, err = r.jobs[asker].Leave(p); err == nil || !strings.Contains(err.Error(), "under way") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("Leave(%d): %v", p, err)
	}
}

// A process joins a running elastic job of two, takes key groups, leaves
// again, and a new process takes its slot (2, past the members) again:
// it takes key groups of every keyed operator once more, and every
// result equals the plain computation's. With checkpoints, those taken
// while the slot was left complete without it, and those after with its
// part.
func TestRejoinProcess(t *testing.T) {
	// 12 s of input: the slot is taken again while the source still reads.
	in := rescaleInput(30000)
	want := withoutTTL(rescaleModel(in))
	for _, c := range []struct {
		strat weir.RescaleStrategy
		ckpt  bool
		asker int // the process asked to make slot 2 leave
	}{{weir.Batched, false, 2}, {weir.Fluid, true, 1}, {weir.AllAtOnce, false, 2}, {weir.Batched, true, 2}} {
		t.Run(fmt.Sprintf("%v/checkpoints-%v/asked-of-%d", c.strat, c.ckpt, c.asker), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			opts := []weir.JobOption{weir.Workers(2), weir.BatchInterval(20 * time.Millisecond), weir.ElasticCluster(2)}
			if c.ckpt {
				opts = append(opts, weir.Checkpoints(t.TempDir(), 3, 3))
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
			join := func() {
				r.start(ctx, t, 2, func(j *weir.Job) { rescaleOpsAt(j, in, 2500, nil) }, append(opts, weir.JoinCluster())...)
			}
			join()
			for r.movedOut() == 0 && ctx.Err() == nil {
				time.Sleep(2 * time.Millisecond)
			}
			first, _ := r.jobs[0].LastJoin()
			r.leaveSlot(t, c.asker, 2)
			before := r.movedOut()
			join()
			r.wait(t)
			again, ok := r.jobs[0].LastJoin()
			if !ok || again.Join <= first.Join || again.Moves == 0 {
				t.Errorf("process 0's second join of slot 2: %+v (first at %d); want a later one that moved key groups", again, first.Join)
			}
			if r.movedOut() == before {
				t.Error("no key group moved to the process that took slot 2 again")
			}
			if late := r.jobs[0].Metrics().Late; late != 0 {
				t.Errorf("%d late records", late)
			}
			checkOps(t, out.Records(), want)
		})
	}
}

// takeAgain runs a process in slot 2 of r (past the members), waits until
// it read or moved something (until), makes it leave (asked of itself)
// and starts another in its slot.
func (r *elasticRun) takeAgain(ctx context.Context, t *testing.T, build func(j *weir.Job), until func() bool, opts []weir.JobOption) {
	t.Helper()
	r.start(ctx, t, 2, build, append(opts, weir.JoinCluster())...)
	for !until() && ctx.Err() == nil {
		time.Sleep(2 * time.Millisecond)
	}
	r.leaveSlot(t, 2, 2)
	r.start(ctx, t, 2, build, append(opts, weir.JoinCluster())...)
}

// A process joins a running elastic job whose source reads on every
// instance, leaves, and another takes its slot again: the readers'
// shares spread onto its instances once more, and every record is
// counted once.
func TestRejoinWithSources(t *testing.T) {
	in := wordsInput(30000)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := startWordCount(ctx, t, 3, func(j *weir.Job) *weir.Collect[wordCount] { return runningWordCount(j, in) })
	var first *weir.Job
	r.takeAgain(ctx, t, r.build(2), func() bool {
		first = r.jobs[2]
		return r.jobs[2].Metrics().Records > 0
	}, r.opts)
	r.wait(t)
	if got := first.Metrics().Records; got == 0 {
		t.Error("the first process of slot 2 read no record")
	}
	if got := r.jobs[2].Metrics().Records; got == 0 {
		t.Error("the process that took slot 2 again read no record")
	}
	checkWordCounts(t, in, r.outs[0].Records())
}

// A job whose slot 2 was taken again crashes after checkpoints taken
// with the new process's part; the members restart from the newest one
// without it, and every result is exact.
func TestRejoinThenCrash(t *testing.T) {
	in := rescaleInput(40000)
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
	first.takeAgain(ctx, t, build, func() bool { return first.movedOut() > 0 }, opts)
	before := first.movedOut()
	for first.movedOut() == before && ctx.Err() == nil && first.jobs[0].Metrics().Records < int64(len(in)) {
		time.Sleep(2 * time.Millisecond)
	}
	after := newestCheckpoint(dir)
	for newestCheckpoint(dir) < after+4 && ctx.Err() == nil && first.jobs[0].Metrics().Records < int64(len(in)) {
		time.Sleep(2 * time.Millisecond)
	}
	if first.movedOut() == before || newestCheckpoint(dir) < after+4 {
		t.Fatalf("the input ended before key groups moved to the second process of slot 2 and checkpoints completed after (newest %d, %d then)", newestCheckpoint(dir), after)
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
		t.Errorf("the second run restored checkpoint %d, not one taken after key groups moved to the second process of slot 2 (after %d)", from, after)
	}
	checkOps(t, out.Records(), want)
}
