package weir_test

import (
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// A paced source delivers every record, in order per instance, and takes
// at least as long as its rate says.
func TestPaced(t *testing.T) {
	in := make([]int, 3000)
	for i := range in {
		in[i] = i
	}
	const rate = 20_000.0
	for _, workers := range []int{1, 3} {
		j := weir.NewJob("paced", weir.Workers(workers), weir.BatchInterval(10*time.Millisecond))
		out := &weir.Collect[int]{}
		weir.Sink(weir.Source(j, "src", weir.Paced[int](weir.SliceSource[int]{Records: in, BatchSize: 500}, rate)), out)
		start := time.Now()
		if err := runErr(t, j); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		got := out.Records()
		slices.Sort(got)
		if !slices.Equal(got, in) {
			t.Errorf("workers %d: %d records; want all %d", workers, len(got), len(in))
		}
		if min := time.Duration(float64(len(in)-workers) / rate * float64(time.Second)); took < min {
			t.Errorf("workers %d: %d records at %v/s took %v; want at least %v", workers, len(in), rate, took, min)
		}
		if m := j.Metrics(); m.Epochs < 5 {
			t.Errorf("workers %d: %d epochs in %v of 10 ms epochs: the paced reader held up epoch cuts", workers, m.Epochs, took)
		}
	}
	j := weir.NewJob("bad", weir.Workers(1))
	weir.Sink(weir.Source(j, "src", weir.Paced[int](weir.SliceSource[int]{Records: in}, 0)), &weir.Collect[int]{})
	if err := runErr(t, j); err == nil {
		t.Error("a rate of 0 was accepted")
	}
}

// A paced source knows its backlog: read faster than what follows it
// can take, the records due and not read show in its figures (and the
// job's records are all there at the end); a plain slice's reader does
// not say.
func TestPacedBacklog(t *testing.T) {
	in := make([]int, 1500)
	for i := range in {
		in[i] = i
	}
	for _, paced := range []bool{true, false} {
		var src weir.Input[int] = weir.SliceSource[int]{Records: in, BatchSize: 16}
		if paced {
			src = weir.Paced[int](src, 3000)
		}
		var j *weir.Job
		var most int64
		known := false
		j = weir.NewJob("backlog", weir.Workers(1), weir.BatchInterval(20*time.Millisecond), weir.OnEpoch(func(weir.EpochStats) {
			for _, s := range j.Stats().Instances() {
				if s.Source {
					most, known = max(most, s.Backlog), known || s.KnowsBacklog
				}
			}
		}))
		slow := weir.Map(weir.Source(j, "src", src), func(v int) int { time.Sleep(time.Millisecond); return v })
		out := &weir.Collect[int]{}
		weir.Sink(slow, out)
		if err := runErr(t, j); err != nil {
			t.Fatal(err)
		}
		if len(out.Records()) != len(in) {
			t.Errorf("paced %v: %d records of %d", paced, len(out.Records()), len(in))
		}
		if paced && (!known || most < 100) {
			t.Errorf("a paced source at 3000/s before a step of 1 ms a record: backlog known %v, at most %d; want known and above 100", known, most)
		}
		if !paced && known {
			t.Error("a slice's reader has a backlog in the figures")
		}
	}
}
