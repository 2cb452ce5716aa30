package weir_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/transport"
)

// endedWordCount is runningWordCount over in, with two more sources whose
// input ends at once: short1, read by one instance (process 0's), and
// short2, read on every instance. Their instances end long before a
// process joins, and the joiner's instances must not wait for them.
func endedWordCount(j *weir.Job, in, short1, short2 []string) *weir.Collect[wordCount] {
	s := weir.Source(j, "words", weir.Paced[string](weir.SliceSource[string]{Records: in, BatchSize: 16}, 2500))
	a := weir.Source(j, "short1", weir.SliceSource[string]{Records: short1, BatchSize: 16}, weir.Parallelism(1))
	b := weir.Source(j, "short2", weir.SliceSource[string]{Records: short2, BatchSize: 16})
	c := weir.Process(weir.KeyBy(weir.Union(s, a, b), func(w string) string { return w }), func(k string, st *int, _ string, out []wordCount) []wordCount {
		*st++
		return append(out, wordCount{k, *st})
	}, weir.Name("count"))
	out := &weir.Collect[wordCount]{}
	weir.Sink(c, out, weir.Name("out"), weir.Parallelism(1))
	return out
}

// A process joins (and another takes its slot again) after some sender
// instances have ended: their final markers went out while the slot took
// no part, and the joiner's instances take them as ended instead of
// waiting for them. Every record is counted once.
func TestJoinAfterSendersEnded(t *testing.T) {
	in := wordsInput(12000)
	var short1, short2 []string
	for i := range 300 {
		short1 = append(short1, fmt.Sprintf("a%d", i%13))
		short2 = append(short2, fmt.Sprintf("b%d", i%11))
	}
	all := append(append(append([]string(nil), in...), short1...), short2...)
	for _, again := range []bool{false, true} {
		t.Run(fmt.Sprintf("taken-again-%v", again), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			r := &elasticRun{slots: transport.NewLocalSlots(3), jobs: make([]*weir.Job, 3), errs: make([]error, 3)}
			outs := make([]*weir.Collect[wordCount], 3)
			build := func(p int) func(j *weir.Job) {
				return func(j *weir.Job) { outs[p] = endedWordCount(j, in, short1, short2) }
			}
			opts := []weir.JobOption{weir.Workers(2), weir.BatchInterval(20 * time.Millisecond), weir.ElasticCluster(2)}
			for p := range 2 {
				r.start(ctx, t, p, build(p), opts...)
			}
			// The short sources end at once; 1000 records of the paced
			// one take 0.4 s.
			for r.jobs[0].Metrics().Records < int64(1000+len(short1)+len(short2)) && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
			if again {
				r.takeAgain(ctx, t, build(2), func() bool { return r.jobs[2].Metrics().Records > 0 }, opts)
			} else {
				r.start(ctx, t, 2, build(2), append(opts, weir.JoinCluster())...)
			}
			r.wait(t)
			if got := r.jobs[2].Metrics().Records; got == 0 {
				t.Error("the process that joined read no record")
			}
			checkWordCounts(t, all, outs[0].Records())
		})
	}
}
