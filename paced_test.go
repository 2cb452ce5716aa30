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
