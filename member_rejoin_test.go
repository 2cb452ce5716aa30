package weir_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/transport"
)

// A member's slot (1 of 2 members) leaves and a new process takes it
// again while the job runs: every record is counted once.
func TestRejoinMemberSlot(t *testing.T) {
	in := wordsInput(30000)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := startWordCount(ctx, t, 2, func(j *weir.Job) *weir.Collect[wordCount] { return runningWordCount(j, in) })
	r.leaveSlot(t, 1, 1)
	r.start(ctx, t, 1, r.build(1), append(r.opts, weir.JoinCluster())...)
	r.wait(t)
	if got := r.jobs[1].Metrics().Records; got == 0 {
		t.Error("the process that took slot 1 again read no record")
	}
	checkWordCounts(t, in, r.outs[0].Records())
}

// Slot 1 of a job of two members leaves once it holds key groups of
// every keyed operator, and a new process takes it again: the results
// equal the plain computation's, with and without checkpoints.
func TestRejoinMemberSlotKeyed(t *testing.T) {
	in := rescaleInput(30000)
	want := withoutTTL(rescaleModel(in))
	for _, ckpt := range []bool{false, true} {
		t.Run(fmt.Sprintf("checkpoints-%v", ckpt), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			opts := []weir.JobOption{weir.Workers(2), weir.BatchInterval(20 * time.Millisecond), weir.ElasticCluster(2)}
			if ckpt {
				opts = append(opts, weir.Checkpoints(t.TempDir(), 3, 3))
			}
			r := &elasticRun{slots: transport.NewLocalSlots(2), jobs: make([]*weir.Job, 2), errs: make([]error, 2)}
			var out *weir.Collect[rsOut]
			for p := range 2 {
				r.start(ctx, t, p, func(j *weir.Job) {
					if o := rescaleOpsAt(j, in, 2500, nil); p == 0 {
						out = o
					}
				}, opts...)
			}
			for r.jobs[0].Metrics().Records < 1000 && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
			r.leaveSlot(t, 1, 1)
			moved, _ := r.jobs[0].MovedBytes()
			r.start(ctx, t, 1, func(j *weir.Job) { rescaleOpsAt(j, in, 2500, nil) }, append(opts, weir.JoinCluster())...)
			r.wait(t)
			if m, _ := r.jobs[0].MovedBytes(); m == moved {
				t.Error("no key group moved to the process that took slot 1 again")
			}
			checkOps(t, out.Records(), want)
		})
	}
}
