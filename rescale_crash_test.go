package weir_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// crashOn is a map that panics once crash is set.
func crashOn(crash *atomic.Bool) func(s weir.Stream[rec]) weir.Stream[rec] {
	return func(s weir.Stream[rec]) weir.Stream[rec] {
		return weir.Map(s, func(r rec) rec {
			if crash.Load() {
				panic("crash")
			}
			return r
		}, weir.Stateless(), weir.Name("crash"), weir.Parallelism(1))
	}
}

// newestCheckpoint is the number of the newest complete checkpoint in dir
// (0: none).
func newestCheckpoint(dir string) uint64 {
	var n uint64
	done, _ := filepath.Glob(filepath.Join(dir, "chk-*", "MANIFEST"))
	for _, m := range done {
		v, err := strconv.ParseUint(strings.TrimPrefix(filepath.Base(filepath.Dir(m)), "chk-"), 10, 64)
		if err == nil {
			n = max(n, v)
		}
	}
	return n
}

// crashDuringRescale runs a job with checkpoints in dir that rescales to
// 4 instances, waits until epoch crashAt(m) of the rescale m is complete
// and a checkpoint taken after it is too, then makes the job crash, and
// returns the job, the rescale and the epoch the job had completed at the
// crash.
func crashDuringRescale(t *testing.T, in []rec, dir string, opts []weir.JobOption, crashAt func(m *weir.Migration) uint64, ropts ...weir.RescaleOption) (*weir.Job, *weir.Migration, uint64) {
	t.Helper()
	var epoch atomic.Uint64
	var crash atomic.Bool
	j := weir.NewJob("crash", append(opts, weir.OnEpoch(func(s weir.EpochStats) { epoch.Store(s.Epoch) }))...)
	rescaleOpsAt(j, in, 8000, crashOn(&crash))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- j.Run(ctx) }()
	wait := func(what string, ok func() bool) { waitRunning(t, done, what, ok) }
	wait("reading 2000 records", func() bool { return j.Metrics().Records >= 2000 })
	m, err := j.Rescale(4, ropts...)
	if err != nil {
		t.Fatal(err)
	}
	at := crashAt(m)
	wait(fmt.Sprintf("epoch %d", at), func() bool { return epoch.Load() >= at })
	chk := newestCheckpoint(dir)
	wait("a checkpoint after it", func() bool { return newestCheckpoint(dir) > chk })
	crashed := epoch.Load()
	crash.Store(true)
	if err := <-done; err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("first run: %v; want the crash", err)
	}
	return j, m, crashed
}

// A job that crashes in the middle of a rescale restarts from its last
// checkpoint with the routing tables the checkpoint recorded: the key
// groups are where the steps before it put them, the steps after it still
// take force, and every result is exact. Also when the key groups moved
// before the crash went as deltas on a checkpoint (and those after it go
// as deltas on the checkpoint restored).
func TestRescaleCrashMidMigration(t *testing.T) {
	in := rescaleInput(10000)
	want := rescaleModel(in)
	for _, c := range []struct {
		strat  weir.RescaleStrategy
		deltas bool
	}{{weir.Fluid, false}, {weir.Batched, false}, {weir.Batched, true}} {
		name := c.strat.String()
		if c.deltas {
			name += "/deltas"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := t.TempDir()
			opts := func() []weir.JobOption {
				o := []weir.JobOption{weir.Workers(4), weir.EpochRecords(100), weir.KeyGroups(32),
					weir.ActiveInstances(2), weir.Checkpoints(d, 3, 3)}
				if c.deltas {
					o = append(o, weir.Checkpoints(d, 3, 8), weir.AlwaysDeltas())
				}
				return o
			}
			first, m, crashed := crashDuringRescale(t, in, d, opts(), func(m *weir.Migration) uint64 { return m.First + (m.Last-m.First)/3 },
				weir.WithStrategy(c.strat), weir.StepGap(2))
			t.Logf("%d steps in epochs %d..%d; crashed after epoch %d; deltas %v", m.Steps, m.First, m.Last, crashed, weir.DeltasSent(first))
			if c.deltas && len(weir.DeltasSent(first)) == 0 {
				t.Error("no key group went as a delta before the crash")
			}
			if crashed >= m.Last {
				t.Logf("the crash came after the rescale's last step: the machine is slow")
			}
			second := weir.NewJob("crash", opts()...)
			out := rescaleOpsAt(second, in, 8000, crashOn(new(atomic.Bool)))
			if err := runErr(t, second); err != nil {
				t.Fatal(err)
			}
			if second.Metrics().RestoredFrom == 0 {
				t.Fatal("no checkpoint restored")
			}
			if _, kgs := second.MovedBytes(); crashed < m.Last && kgs == 0 {
				t.Error("the restarted job handed over no key group: the rescale's remaining steps did not take force")
			}
			checkOps(t, out.Records(), want)
			// At the end the key groups are where the rescale put them:
			// 8 of the 32 on each instance, in order.
			owning := 0
			for _, s := range second.Stats().Processes[0].Instances {
				if !strings.HasPrefix(s.Operator, "tumbling") || s.KeyGroups == nil {
					continue
				}
				owning++
				if s.KeyGroupLo != 8*s.Instance || len(s.KeyGroups) != 8 {
					t.Errorf("%s#%d owns key groups %d to %d; want %d to %d", s.Operator, s.Instance,
						s.KeyGroupLo, s.KeyGroupLo+len(s.KeyGroups)-1, 8*s.Instance, 8*s.Instance+7)
				}
			}
			if owning != 4 {
				t.Errorf("%d instances of tumbling own key groups at the end; want 4", owning)
			}
		})
	}
}

// A job restarted with another worker count from a checkpoint taken after
// a rescale cannot use the routing tables it recorded: it spreads the key
// groups contiguously over its instances, and the results are exact.
func TestRescaleThenRestoreOtherWorkers(t *testing.T) {
	in := rescaleInput(10000)
	want := rescaleModel(in)
	d := t.TempDir()
	opts := func(w int, more ...weir.JobOption) []weir.JobOption {
		return append([]weir.JobOption{weir.Workers(w), weir.EpochRecords(100), weir.Checkpoints(d, 3, 3)}, more...)
	}
	crashDuringRescale(t, in, d, opts(4, weir.ActiveInstances(1)), func(m *weir.Migration) uint64 { return m.Last + 1 }, weir.WithStrategy(weir.AllAtOnce))
	second := weir.NewJob("crash", opts(3)...)
	out := rescaleOpsAt(second, in, 8000, crashOn(new(atomic.Bool)))
	if err := runErr(t, second); err != nil {
		t.Fatal(err)
	}
	if second.Metrics().RestoredFrom == 0 {
		t.Fatal("no checkpoint restored")
	}
	checkOps(t, out.Records(), want)
}
