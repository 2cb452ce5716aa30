package weir_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir"
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
			r := startWordCount(ctx, t, 3, func(j *weir.Job) *weir.Collect[wordCount] { return endedWordCount(j, in, short1, short2) })
			// The short sources end at once, long before process 0 has
			// read 1000 records.
			if again {
				r.takeAgain(ctx, t, r.build(2), func() bool { return r.jobs[2].Metrics().Records > 0 }, r.opts)
			} else {
				r.start(ctx, t, 2, r.build(2), append(r.opts, weir.JoinCluster())...)
			}
			r.wait(t)
			if got := r.jobs[2].Metrics().Records; got == 0 {
				t.Error("the process that joined read no record")
			}
			checkWordCounts(t, all, r.outs[0].Records())
		})
	}
}
