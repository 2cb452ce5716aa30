package weir_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// A job whose windows run Prompt's or PKG's rounds rescales while it
// runs as a hash-partitioned one does: every window count and running
// count is the plain computation's, the rounds give work only to the
// instances the routing gives key groups to, and the window's instances
// count every record their rounds took in.
func TestRescaleLiveMicroBatch(t *testing.T) {
	in, wantWins, wantSums := liveInput(24000) // 3 s: a batched 4 to 1 takes 96 epochs
	for _, c := range []struct {
		part     string
		strat    weir.RescaleStrategy
		from, to int
	}{{"prompt", weir.Batched, 2, 4}, {"prompt", weir.AllAtOnce, 4, 1}, {"pkg", weir.AllAtOnce, 2, 4}, {"pkg", weir.Batched, 4, 1}} {
		part, strat := c.part, c.strat
		t.Run(fmt.Sprintf("%s/%v/%d-%d", part, strat, c.from, c.to), func(t *testing.T) {
			j, wins, sums := liveJob(in, weir.ActiveInstances(c.from), weir.Partitioning(part))
			done := make(chan error, 1)
			go func() { done <- j.Run(context.Background()) }()
			time.Sleep(400 * time.Millisecond)
			m, err := j.Rescale(c.to, weir.WithStrategy(strat))
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			t.Logf("%d steps (epochs %d..%d)", m.Steps, m.First, m.Last)
			checkLiveOutputs(t, wins, sums, wantWins, wantSums)
			if got := len(wins.Records()); got != len(wantWins) {
				t.Errorf("%d window results for %d windows: a window's partials were merged at more than one instance", got, len(wantWins))
			}
			ps := j.PartitionStats()
			if len(ps) != 1 || ps[0].MapTasks < 1 || ps[0].MapTasks > c.to || part == "pkg" && ps[0].MapTasks != c.to {
				t.Errorf("partition figures %+v; want the last round's tasks within the %d instances", ps, c.to)
			}
			took := int64(0)
			for _, s := range j.Stats().Instances() {
				if s.Operator == "count" {
					took += s.RecordsIn
				}
			}
			if took != int64(len(in)) {
				t.Errorf("the window's instances took in %d records; want %d", took, len(in))
			}
		})
	}
}
