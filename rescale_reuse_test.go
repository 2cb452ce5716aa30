package weir_test

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/pebblestate"
)

// Checkpoint reuse: a key group whose blob the latest complete checkpoint
// holds moves as a delta on it, which the new owner merges with the blob
// it reads from the checkpoint. The results stay those of the plain
// computation for every keyed operator, in memory and in Pebble, in one
// process and over two, with a checkpoint every epoch or every few; and
// state that is mostly cold moves far fewer bytes than whole.

// reuseOps are the operators of rescaleOps whose key groups move, which
// AlwaysDeltas sends as deltas: windows (tumbling, sliding, session and
// the window join), the pair joins (interval, inner), the keyed process
// functions with their timers (kprocess, coprocess) and a Process with
// state TTL (ttl).
var reuseOps = []string{"coprocess", "inner", "interval", "join", "kprocess", "session", "sliding", "ttl", "tumbling"}

// checkDeltas fails unless every operator of ops sent some delta.
func checkDeltas(t *testing.T, sent map[string]int64, ops []string) {
	t.Helper()
	for _, op := range ops {
		if sent[op] == 0 {
			t.Errorf("%s handed no key group over as a delta (deltas: %v)", op, sent)
		}
	}
}

// afterCheckpoint says when to rescale a job that checkpoints into dir
// every `every` epochs: once its sources have read records and the
// newest complete checkpoint is at most two checkpoints behind the
// newest epoch completed (which epoch holds), so that the rescale's
// steps find a recent base.
func afterCheckpoint(j *weir.Job, dir string, epoch *atomic.Uint64, records int64, every int) func() bool {
	return func() bool {
		n := newestCheckpoint(dir)
		return j.Metrics().Records >= records && n > 0 && n+uint64(2*every) >= epoch.Load()
	}
}

func TestRescaleReuseEveryKeyedOperator(t *testing.T) {
	in := rescaleInput(8000)
	want := rescaleModel(in)
	for _, c := range []struct {
		every    int
		pebble   bool
		strat    weir.RescaleStrategy
		from, to int
	}{
		{1, false, weir.Batched, 2, 4}, {3, false, weir.AllAtOnce, 4, 1}, {1, false, weir.Fluid, 4, 2},
		{2, true, weir.Batched, 2, 4}, {3, true, weir.AllAtOnce, 4, 2},
	} {
		name := fmt.Sprintf("every-%d/%v/%d-%d", c.every, c.strat, c.from, c.to)
		if c.pebble {
			name = "pebble/" + name
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := t.TempDir()
			var epoch atomic.Uint64
			opts := []weir.JobOption{weir.Workers(4), weir.EpochRecords(100), weir.ActiveInstances(c.from),
				weir.Checkpoints(d, c.every, 12), weir.AlwaysDeltas(), weir.OnEpoch(func(s weir.EpochStats) { epoch.Store(s.Epoch) })}
			if c.pebble {
				opts = append(opts, pebblestate.Dir(t.TempDir()))
			}
			j := weir.NewJob("rescale-reuse", opts...)
			// 2000 records a second: epochs of 50 ms.
			out := rescaleOpsAt(j, in, 2000, nil)
			rescaleWhen(t, j, "a recent checkpoint", afterCheckpoint(j, d, &epoch, 2000, c.every), c.to, weir.WithStrategy(c.strat))
			checkOps(t, out.Records(), want)
			checkDeltas(t, weir.DeltasSent(j), reuseOps)
			moved, _ := j.MovedBytes()
			t.Logf("moved %d bytes, %d whole; deltas %v", moved, j.WholeBytes(), weir.DeltasSent(j))
		})
	}
}

// Over two processes the key groups that change process go as deltas
// over the network, and the new owner reads their base from the shared
// checkpoint directory.
func TestRescaleReuseProcesses(t *testing.T) {
	in := rescaleInput(8000)
	want := withoutTTL(rescaleModel(in)) // time-based epochs
	// Epochs of 50 ms, checkpoints every few: checkpoints that come faster
	// than the parts are written and synced are never recent enough to
	// reuse.
	for _, c := range []struct {
		every         int
		strat         weir.RescaleStrategy
		from, to, ask int
	}{{2, weir.Batched, 2, 4, 1}, {5, weir.AllAtOnce, 4, 2, 0}} {
		t.Run(fmt.Sprintf("every-%d/%v/%d-%d", c.every, c.strat, c.from, c.to), func(t *testing.T) {
			t.Parallel()
			d := t.TempDir()
			jobs, out := rescaleTwoProcesses(t, in, c.from, c.to, c.ask,
				[]weir.JobOption{weir.BatchInterval(50 * time.Millisecond), weir.Checkpoints(d, c.every, 10), weir.AlwaysDeltas()},
				weir.WithStrategy(c.strat))
			giver := 0
			if c.to < c.from {
				giver = 1
			}
			checkOps(t, out, want)
			checkDeltas(t, weir.DeltasSent(jobs[giver]), slices.DeleteFunc(slices.Clone(reuseOps), func(op string) bool { return op == "ttl" }))
		})
	}
}

// coldInput is cold records, one for each of as many keys, then hot ones
// over 10 keys.
func coldInput(cold, hot int) []rec {
	in := make([]rec, 0, cold+hot)
	for i := range cold {
		in = append(in, rec{ID: i, Key: fmt.Sprintf("cold-%d", i)})
	}
	for i := range hot {
		in = append(in, rec{ID: cold + i, Key: fmt.Sprintf("hot-%d", i%10)})
	}
	return in
}

// coldJob counts in's records per key ("key=count" for each), read at
// 4000 records a second.
func coldJob(j *weir.Job, in []rec) *weir.Collect[string] {
	s := weir.Source(j, "src", weir.Paced[rec](weir.SliceSource[rec]{Records: in, BatchSize: 32}, 4000), weir.Parallelism(1))
	counts := weir.Process(weir.KeyBy(s, recKey), func(k string, n *int, r rec, out []string) []string {
		*n++
		return append(out, fmt.Sprintf("%s=%d", k, *n))
	}, weir.Name("count"))
	got := &weir.Collect[string]{}
	weir.Sink(counts, got, weir.Name("out"))
	return got
}

// With mostly cold state (5000 keys written once, then 10 keys written
// over and over) the key groups that move since a checkpoint taken after
// the cold keys were written have changed in a few keys at most. Over two
// processes, growing from process 0's two instances to four, the 64 key
// groups that go to process 1 go as deltas, a small part of their state,
// and the 32 that stay in process 0 go whole (in memory, a delta saves
// nothing): a third of the whole at most is moved. Without reuse
// everything goes whole, and so in one process with reuse.
func TestRescaleReuseColdState(t *testing.T) {
	in := coldInput(5000, 12000)
	want := map[string]int{}
	n := map[string]int{}
	for _, r := range in {
		n[r.Key]++
		want[fmt.Sprintf("%s=%d", r.Key, n[r.Key])]++
	}
	for _, c := range []struct {
		procs int
		reuse bool
	}{{2, true}, {2, false}, {1, true}} {
		t.Run(fmt.Sprintf("processes-%d/reuse-%v", c.procs, c.reuse), func(t *testing.T) {
			t.Parallel()
			d := t.TempDir()
			// Epochs of 50 ms: the rescale, asked once the cold keys are
			// read, takes force 1.5 s later, when a checkpoint after them
			// is complete.
			opts := []weir.JobOption{weir.BatchInterval(50 * time.Millisecond), weir.ActiveInstances(2), weir.Checkpoints(d, 2, 8)}
			if !c.reuse {
				opts = append(opts, weir.WithoutCheckpointReuse())
			}
			cold := func(jobs []*weir.Job) bool { return jobs[0].Metrics().Records >= 5400 }
			var giver *weir.Job
			var got []string
			if c.procs == 2 {
				outs := make([]*weir.Collect[string], 2)
				giver = twoProcesses(t, opts, func(i int, j *weir.Job) { outs[i] = coldJob(j, in) }, cold, 0, 4, weir.WithStrategy(weir.AllAtOnce))[0]
				got = outs[0].Records()
			} else {
				giver = weir.NewJob("rescale-cold", append(opts, weir.Workers(4))...)
				out := coldJob(giver, in)
				rescaleWhen(t, giver, "reading the cold keys", func() bool { return cold([]*weir.Job{giver}) }, 4, weir.WithStrategy(weir.AllAtOnce))
				got = out.Records()
			}
			checkBag(t, got, bagOf(want))
			moved, kgs := giver.MovedBytes()
			whole, deltas := giver.WholeBytes(), weir.DeltasSent(giver)
			t.Logf("%d key groups: moved %d bytes, %d whole; deltas %v", kgs, moved, whole, deltas)
			switch {
			case kgs != 96 || whole == 0:
				t.Fatalf("%d key groups of %d bytes moved; want 96", kgs, whole)
			case c.procs == 2 && c.reuse && (moved >= whole/2 || deltas["count"] != 64):
				t.Errorf("moved %d bytes of %d whole with %v deltas; want the 64 key groups to process 1 as small deltas", moved, whole, deltas)
			case !(c.procs == 2 && c.reuse) && (moved != whole || len(deltas) > 0):
				t.Errorf("moved %d bytes of %d whole, deltas %v; want everything whole", moved, whole, deltas)
			}
		})
	}
}

// bagOf lists each key of m as many times as m counts it.
func bagOf(m map[string]int) []string {
	var out []string
	for k, n := range m {
		for range n {
			out = append(out, k)
		}
	}
	return out
}
