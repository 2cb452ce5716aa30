package weir_test

import (
	"fmt"
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

// gate holds the records from the one with ID at on until it is opened.
type gate struct {
	at      int
	reached atomic.Bool
	open    chan struct{}
}

func newGate(at int) *gate { return &gate{at: at, open: make(chan struct{})} }

// mid is the gate as a map between a source and the operators.
func (g *gate) mid(s weir.Stream[rec]) weir.Stream[rec] {
	return weir.Map(s, func(r rec) rec {
		if r.ID == g.at {
			g.reached.Store(true)
			<-g.open
		}
		return r
	}, weir.Stateless(), weir.Name("gate"), weir.Parallelism(1))
}

// Every keyed operator gives the plain computation's results when its key
// groups move as deltas, in memory and in Pebble. The input stops at
// record 2000 (epochs of 100 records: epoch 19 is the last complete)
// until the checkpoint of epoch 19 or before it is complete and the
// rescale is asked for (two epochs ahead), so that its first step finds
// that base: an all-at-once rescale, one step, sends every operator's key
// groups as deltas. The later steps of the others use whatever base is
// complete when they come.
func TestRescaleReuseEveryKeyedOperator(t *testing.T) {
	in := rescaleInput(8000)
	want := rescaleModel(in)
	for _, c := range []struct {
		every    int
		pebble   bool
		strat    weir.RescaleStrategy
		from, to int
	}{
		{1, false, weir.AllAtOnce, 4, 1}, {3, false, weir.AllAtOnce, 2, 4}, {1, true, weir.AllAtOnce, 4, 2}, {3, true, weir.AllAtOnce, 2, 4},
		{1, false, weir.Batched, 2, 4}, {1, false, weir.Fluid, 4, 2}, {2, true, weir.Batched, 2, 4},
	} {
		name := fmt.Sprintf("every-%d/%v/%d-%d", c.every, c.strat, c.from, c.to)
		if c.pebble {
			name = "pebble/" + name
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := t.TempDir()
			opts := []weir.JobOption{weir.Workers(4), weir.EpochRecords(100), weir.ActiveInstances(c.from),
				weir.Checkpoints(d, c.every, 12), weir.AlwaysDeltas()}
			if c.pebble {
				opts = append(opts, pebblestate.Dir(t.TempDir()))
			}
			j := weir.NewJob("rescale-reuse", opts...)
			g := newGate(2000)
			out := rescaleOpsAt(j, in, 4000, g.mid)
			base := uint64(19 / c.every * c.every)
			rescaleWhen(t, j, fmt.Sprintf("checkpoint %d", base), func() bool { return g.reached.Load() && newestCheckpoint(d) >= base },
				func() { close(g.open) }, c.to, weir.WithStrategy(c.strat))
			checkOps(t, out.Records(), want)
			if c.strat == weir.AllAtOnce {
				checkDeltas(t, weir.DeltasSent(j), reuseOps)
			}
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
	// Epochs of 50 ms, a checkpoint every 2 or 5 of them, of which the
	// newest 20 or 8 are kept: a step reuses the newest complete checkpoint
	// if it is at most 2 s older than the step (see baseSafe), which leaves
	// room for the checkpoints' writes to lag.
	for _, c := range []struct {
		every, keep   int
		strat         weir.RescaleStrategy
		from, to, ask int
	}{{2, 20, weir.Batched, 2, 4, 1}, {5, 8, weir.AllAtOnce, 4, 2, 0}} {
		t.Run(fmt.Sprintf("every-%d/%v/%d-%d", c.every, c.strat, c.from, c.to), func(t *testing.T) {
			t.Parallel()
			d := t.TempDir()
			jobs, out := rescaleTwoProcesses(t, in, c.from, c.to, c.ask,
				[]weir.JobOption{weir.BatchInterval(50 * time.Millisecond), weir.Checkpoints(d, c.every, c.keep), weir.AlwaysDeltas()},
				weir.WithStrategy(c.strat))
			giver := 0
			if c.to < c.from {
				giver = 1
			}
			checkOps(t, out, want)
			sent := weir.DeltasSent(jobs[giver])
			t.Logf("deltas %v", sent)
			if len(sent) == 0 {
				t.Error("no key group went as a delta")
			}
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
func coldJob(j *weir.Job, in []rec) *weir.Collect[string] { return coldJobThrough(j, in, nil) }

// coldJobThrough is coldJob with mid, if set, between the source (of one
// instance) and the counts.
func coldJobThrough(j *weir.Job, in []rec, mid func(weir.Stream[rec]) weir.Stream[rec]) *weir.Collect[string] {
	s := weir.Source(j, "src", weir.Paced[rec](weir.SliceSource[rec]{Records: in, BatchSize: 32}, 4000), weir.Parallelism(1))
	if mid != nil {
		s = mid(s)
	}
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
	in := coldInput(5000, 20000)
	want := coldWant(in)
	for _, c := range []struct {
		procs int
		reuse bool
	}{{2, true}, {2, false}, {1, true}} {
		t.Run(fmt.Sprintf("processes-%d/reuse-%v", c.procs, c.reuse), func(t *testing.T) {
			t.Parallel()
			d := t.TempDir()
			// Epochs of 50 ms, a checkpoint every 10 (0.5 s): the cold keys
			// are read in 1.25 s, the rescale is asked at 2 s and takes
			// force 1.5 s later, when a checkpoint taken after the cold
			// keys is complete unless the checkpoints lag by 1.75 s; and a
			// step reuses a checkpoint up to 4 s older than it (the newest
			// 8 are kept, see baseSafe). The input lasts 6.25 s, so that
			// the job does not end before the rescale takes force on a
			// loaded machine (it then moves nothing).
			opts := []weir.JobOption{weir.BatchInterval(50 * time.Millisecond), weir.ActiveInstances(2), weir.Checkpoints(d, 10, 8)}
			if !c.reuse {
				opts = append(opts, weir.WithoutCheckpointReuse())
			}
			cold := func(jobs []*weir.Job) bool { return jobs[0].Metrics().Records >= 8000 }
			var giver *weir.Job
			var got []string
			if c.procs == 2 {
				outs := make([]*weir.Collect[string], 2)
				giver = twoProcessesWaited(t, opts, func(i int, j *weir.Job) { outs[i] = coldJob(j, in) }, cold, 0, 4, func(m *weir.Migration, _ []*weir.Job) {
					if !m.Completed() {
						t.Errorf("the job ended before the rescale's last step (epoch %d)", m.Last)
					}
				}, weir.WithStrategy(weir.AllAtOnce))[0]
				got = outs[0].Records()
			} else {
				giver = weir.NewJob("rescale-cold", append(opts, weir.Workers(4))...)
				out := coldJob(giver, in)
				rescaleWhen(t, giver, "reading the cold keys", func() bool { return cold([]*weir.Job{giver}) }, nil, 4, weir.WithStrategy(weir.AllAtOnce))
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

// coldWant is coldJob's plain computation over in: each key's running
// count, once per record.
func coldWant(in []rec) map[string]int {
	want := map[string]int{}
	n := map[string]int{}
	for _, r := range in {
		n[r.Key]++
		want[fmt.Sprintf("%s=%d", r.Key, n[r.Key])]++
	}
	return want
}
