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

// elasticRun is an elastic job over in-process slots: the first processes
// start it, others join while it runs.
type elasticRun struct {
	slots *transport.LocalSlots
	jobs  []*weir.Job
	errs  []error
	wg    sync.WaitGroup
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
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.errs[p] = r.jobs[p].Run(ctx)
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

// A process joins a running elastic job of two: it takes key groups of
// every keyed operator (windows of three kinds, rankings, joins, timers,
// process state) while the job runs, and every result equals the plain
// computation's. With checkpoints, those taken after the join complete
// with its part.
func TestJoinProcess(t *testing.T) {
	in := rescaleInput(8000)
	want := withoutTTL(rescaleModel(in))
	for _, ckpt := range []bool{false, true} {
		t.Run(fmt.Sprintf("checkpoints-%v", ckpt), func(t *testing.T) {
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
					}
				}, opts...)
			}
			for r.jobs[0].Metrics().Records < 1000 && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
			r.start(ctx, t, 2, func(j *weir.Job) { rescaleOpsAt(j, in, 2500, nil) }, append(opts, weir.JoinCluster())...)
			r.wait(t)
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
	const n = 9000
	in := make([]string, n)
	for i := range in {
		in[i] = fmt.Sprintf("w%d", i%97)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := &elasticRun{slots: transport.NewLocalSlots(3), jobs: make([]*weir.Job, 3), errs: make([]error, 3)}
	outs := make([]*weir.Collect[wordCount], 3)
	build := func(p int) func(j *weir.Job) {
		return func(j *weir.Job) {
			s := weir.Source(j, "words", weir.Paced[string](weir.SliceSource[string]{Records: in, BatchSize: 16}, 2500))
			c := weir.Process(weir.KeyBy(s, func(w string) string { return w }), func(k string, st *int, _ string, out []wordCount) []wordCount {
				*st++
				return append(out, wordCount{k, *st})
			}, weir.Name("count"))
			outs[p] = &weir.Collect[wordCount]{}
			weir.Sink(c, outs[p], weir.Name("out"), weir.Parallelism(1))
		}
	}
	opts := []weir.JobOption{weir.Workers(2), weir.BatchInterval(20 * time.Millisecond), weir.ElasticCluster(2)}
	for p := range 2 {
		r.start(ctx, t, p, build(p), opts...)
	}
	for r.jobs[0].Metrics().Records < 1000 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	r.start(ctx, t, 2, build(2), append(opts, weir.JoinCluster())...)
	r.wait(t)
	if got := r.jobs[2].Metrics().Records; got == 0 {
		t.Error("the process that joined read no record")
	}
	last := map[string]int{}
	for _, w := range outs[0].Records() {
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
	if got := len(outs[0].Records()); got != n {
		t.Errorf("%d counts out, want one per record, %d", got, n)
	}
}
