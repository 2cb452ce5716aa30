package weir_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// Processing-time timers and a state time-to-live in processing time move
// with their key groups: the phases of records before a rescale register
// timers that fire, and leave state that expires, after it, on the new
// owners, as the plain model of the clock says.
func TestRescaleProcessingTime(t *testing.T) {
	phases, clocks := phaseRecs(6, 200, 64), []int64{1000, 1100, 1250, 1600, 1700, 2200}
	wantTimers, firedBefore := ptModel(phases, clocks)
	var all []rec
	for _, recs := range phases {
		all = append(all, recs...)
	}
	wantTTL := ttlModel(all, 200, func(r rec) int64 { return clocks[r.TS] })
	const mid = 3 // the rescale happens before phase mid
	for _, strat := range []weir.RescaleStrategy{weir.Batched, weir.AllAtOnce, weir.Fluid} {
		for _, c := range []struct{ from, to int }{{2, 4}, {4, 1}} {
			t.Run(fmt.Sprintf("%v/%d-%d", strat, c.from, c.to), func(t *testing.T) {
				t.Parallel()
				src := newPhased(phases, clocks)
				j := weir.NewJob("ptime", weir.Workers(4), weir.BatchInterval(5*time.Millisecond), src.opt(), weir.ActiveInstances(c.from))
				var processed, fired, counted atomic.Int64
				var mg atomic.Pointer[weir.Migration]
				asked := false
				src.ready = func(p int) bool {
					n := int64(seenBefore(phases, p))
					if processed.Load() < n || fired.Load() < int64(firedBefore[p]) || counted.Load() < 2*n {
						return false
					}
					if p != mid {
						return true
					}
					if !asked {
						asked = true
						m, err := j.Rescale(c.to, weir.WithStrategy(strat))
						if err != nil {
							t.Errorf("Rescale: %v", err)
							return true
						}
						mg.Store(m)
					}
					m := mg.Load()
					if m == nil {
						return true
					}
					ctx, cancel := context.WithCancel(context.Background())
					cancel()
					return m.Wait(ctx) == nil
				}
				s := weir.Source(j, "src", src, weir.Parallelism(1))
				type ctx = weir.ProcessContext[string, struct{}, ptOut]
				timers := weir.KeyedProcess(weir.KeyBy(s, recKey), weir.ProcessFunc[string, rec, struct{}, ptOut]{
					OnRecord: func(c *ctx, r rec) {
						c.RegisterProcessingTimer(c.ProcessingTime() + r.Val)
						processed.Add(1)
						src.poke()
					},
					OnTimer: func(c *ctx, tm weir.Timer) {
						c.Emit(ptOut{Key: c.Key(), T: tm.Time, At: c.ProcessingTime(), BadTime: tm.Domain != weir.ProcessingTimeDomain})
						fired.Add(1)
						src.poke()
					},
				}, weir.Name("timers"))
				gotTimers := &weir.Collect[ptOut]{}
				weir.Sink(timers, gotTimers, weir.Name("timers-out"))
				gotTTL := &weir.Collect[ttlOut]{}
				weir.Sink(countTTL(s, 200*time.Millisecond, weir.ProcessingTimeDomain, func() {
					counted.Add(1)
					src.poke()
				}), gotTTL, weir.Name("ttl-out"))
				if err := runErr(t, j); err != nil {
					t.Fatal(err)
				}
				if mg.Load() == nil {
					t.Fatal("no rescale took place")
				}
				t.Run("timers", func(t *testing.T) { checkBag(t, gotTimers.Records(), wantTimers) })
				t.Run("ttl", func(t *testing.T) { checkBag(t, gotTTL.Records(), wantTTL) })
			})
		}
	}
}
