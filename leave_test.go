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

// A process of a running job leaves it: its key groups move to the
// processes that stay, its instances end, its Run returns nil before the
// others', and every keyed operator still gives the plain computation's
// results. Asked of the leaving process or of another one, in a job of
// two and of three processes, under every strategy.
func TestLeaveProcess(t *testing.T) {
	in := rescaleInput(8000)
	want := withoutTTL(rescaleModel(in))
	for _, c := range []struct {
		procs, leave, ask int
		strat             weir.RescaleStrategy
	}{{2, 1, 1, weir.Batched}, {2, 1, 0, weir.Fluid}, {3, 2, 0, weir.AllAtOnce}, {3, 1, 2, weir.Batched}} {
		t.Run(fmt.Sprintf("%d-processes/leave-%d/asked-of-%d/%v", c.procs, c.leave, c.ask, c.strat), func(t *testing.T) {
			t.Parallel()
			nets := transport.NewLocal(c.procs)
			jobs := make([]*weir.Job, c.procs)
			outs := make([]*weir.Collect[rsOut], c.procs)
			errs := make([]error, c.procs)
			ended := make([]time.Time, c.procs)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var wg sync.WaitGroup
			for i := range jobs {
				jobs[i] = weir.NewJob("leave", weir.Workers(2), weir.BatchInterval(20*time.Millisecond), weir.WithNetwork(nets[i]))
				outs[i] = rescaleOpsAt(jobs[i], in, 2500, nil)
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = jobs[i].Run(ctx)
					ended[i] = time.Now()
				}()
			}
			for jobs[0].Metrics().Records < 1000 && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
			m, err := jobs[c.ask].Leave(c.leave, weir.WithStrategy(c.strat))
			if err != nil {
				t.Fatalf("Leave(%d) of process %d: %v", c.leave, c.ask, err)
			}
			if m.Leave == 0 || m.Moves == 0 {
				t.Errorf("the leave moves %d key groups, from epoch %d", m.Moves, m.Leave)
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("process %d: %v", i, err)
				}
			}
			if !ended[c.leave].Before(ended[0]) {
				t.Errorf("the leaving process ended at %v, not before process 0 (%v)", ended[c.leave], ended[0])
			}
			if _, kgs := jobs[c.leave].MovedBytes(); kgs == 0 {
				t.Errorf("process %d left without handing a key group over", c.leave)
			}
			if late := jobs[0].Metrics().Late; late != 0 {
				t.Errorf("%d late records", late)
			}
			checkOps(t, outs[0].Records(), want)
		})
	}
}
