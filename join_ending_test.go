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

// A process that asks to join a job that is ending is refused with the
// reason instead of taking key groups from instances that have ended
// (it would wait for markers no process sends again, or fail on the
// closed connection of a process that ended). The job is ending once a
// process other than one that left has ended altogether (its input
// read, its part done, while process 0 still writes the output), or
// once every source instance has read its input while the keyed
// instances still work. The job's result is whole either way.
func TestJoinWhileEnding(t *testing.T) {
	in := wordsInput(300)
	for _, c := range []struct {
		at   string // where the job holds back its end
		want string
	}{{"sink", "the job is ending: process 1 has ended"}, {"count", "the job is ending: its sources have all read their input"}} {
		t.Run("held-at-"+c.at, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			release := make(chan struct{})
			hold := func(at string) func() {
				var once sync.Once
				return func() {
					if at == c.at {
						once.Do(func() { <-release })
					}
				}
			}
			opts := []weir.JobOption{weir.Workers(2), weir.BatchInterval(20 * time.Millisecond), weir.ElasticCluster(2)}
			r := &elasticRun{slots: transport.NewLocalSlots(3), jobs: make([]*weir.Job, 3), errs: make([]error, 3)}
			var got []wordCount
			var mu sync.Mutex
			build := func(j *weir.Job) {
				holdCount, holdSink := hold("count"), hold("sink")
				s := weir.Source(j, "words", weir.SliceSource[string]{Records: in, BatchSize: 16})
				cnt := weir.Process(weir.KeyBy(s, func(w string) string { return w }), func(k string, st *int, _ string, out []wordCount) []wordCount {
					holdCount()
					*st++
					return append(out, wordCount{k, *st})
				}, weir.Name("count"))
				weir.Sink(cnt, weir.SinkFunc[wordCount](func(b []wordCount) error {
					holdSink()
					mu.Lock()
					got = append(got, b...)
					mu.Unlock()
					return nil
				}), weir.Name("out"), weir.Parallelism(1))
			}
			for p := range 2 {
				r.start(ctx, t, p, build, opts...)
			}
			for !ending(r.jobs[0], c.at) && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
			r.start(ctx, t, 2, build, append(opts, weir.JoinCluster())...)
			select {
			case <-r.ran[2]:
			case <-ctx.Done():
				t.Fatal("the process that asked to join did not end")
			}
			close(release)
			r.wg.Wait()
			for p, err := range r.errs[:2] {
				if err != nil {
					t.Errorf("process %d: %v", p, err)
				}
			}
			if err := r.errs[2]; err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("the process that asked to join: %v; want a refusal saying %q", err, c.want)
			}
			checkWordCounts(t, in, got)
		})
	}
}

// ending says whether process 0 knows what TestJoinWhileEnding waits for
// before a process asks to join: with the sink held, process 1's final
// summary; with the counts held, every source instance of processes 0
// and 1 ended.
func ending(j *weir.Job, at string) bool {
	st := j.Stats()
	if at == "sink" {
		return st.Processes[1].Final
	}
	n := 0
	for _, ps := range st.Processes[:2] {
		for _, in := range ps.Instances {
			if in.Source && (in.Running || in.Lifetime == 0) {
				return false
			}
			if in.Source {
				n++
			}
		}
	}
	return n == 4
}

// A process admitted to a job whose input then ends before the join's
// epoch: process 1 ends altogether (in order) before the joiner takes
// part, so the final markers of its senders towards the joiner, held
// for its join, never go, and its keyed instances hand the joiner
// nothing. The joiner takes the close (or the close message) of a
// process that ended as their end, and the job ends whole: with the
// source read on every instance, and read by one instance (process
// 0's), whose end does not wait for the joiner.
func TestJoinThenInputEnds(t *testing.T) {
	in := wordsInput(1500)
	for _, readers := range []int{0, 1} {
		t.Run(fmt.Sprintf("readers-%d", readers), func(t *testing.T) {
			joinThenInputEnds(t, in, readers)
		})
	}
}

// joinThenInputEnds runs TestJoinThenInputEnds with the source read by
// readers instances (0: every instance).
func joinThenInputEnds(t *testing.T, in []string, readers int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	release := make(chan struct{})
	var once sync.Once
	opts := []weir.JobOption{weir.Workers(2), weir.BatchInterval(20 * time.Millisecond), weir.ElasticCluster(2)}
	r := &elasticRun{slots: transport.NewLocalSlots(3), jobs: make([]*weir.Job, 3), errs: make([]error, 3)}
	var got []wordCount
	var mu sync.Mutex
	build := func(j *weir.Job) {
		var srcOpts []weir.Option
		if readers > 0 {
			srcOpts = append(srcOpts, weir.Parallelism(readers))
		}
		s := weir.Source(j, "words", weir.Paced[string](weir.SliceSource[string]{Records: in, BatchSize: 16}, 3000), srcOpts...)
		cnt := weir.Process(weir.KeyBy(s, func(w string) string { return w }), func(k string, st *int, _ string, out []wordCount) []wordCount {
			*st++
			return append(out, wordCount{k, *st})
		}, weir.Name("count"))
		weir.Sink(cnt, weir.SinkFunc[wordCount](func(b []wordCount) error {
			mu.Lock()
			got = append(got, b...)
			n := len(got)
			mu.Unlock()
			if n >= len(in) {
				// The end is held until the test has seen process 1 end.
				once.Do(func() { <-release })
			}
			return nil
		}), weir.Name("out"), weir.Parallelism(1))
	}
	for p := range 2 {
		r.start(ctx, t, p, build, opts...)
	}
	for r.jobs[0].Metrics().Records < 100 && ctx.Err() == nil {
		time.Sleep(2 * time.Millisecond)
	}
	// The input (0.5 s at 3000 records a second) ends before the join's
	// epoch (at least 1.5 s ahead).
	r.start(ctx, t, 2, build, append(opts, weir.JoinCluster())...)
	for !r.jobs[0].Stats().Processes[1].Final && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	r.wait(t)
	if m, ok := r.jobs[0].LastJoin(); !ok || m.Join == 0 {
		t.Fatalf("process 0's join: %+v (%v); the test needs the process admitted before the input ended", m, ok)
	}
	checkWordCounts(t, in, got)
}
