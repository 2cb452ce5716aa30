package weir_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/internal/exchange"
	kgs "github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/transport"
)

// statsInput is the input of the figures' tests: n records over 37 keys.
func statsInput(n int) []rec {
	in := make([]rec, n)
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", i%37), TS: int64(i)}
	}
	return in
}

func statsKeep(r rec) bool { return r.ID%3 != 0 }

// statsJob reads in, filters, counts per key (Process, behind a keyed
// exchange) and collects the running counts.
func statsJob(j *weir.Job, in []rec) *weir.Collect[int] {
	s := weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 64})
	f := weir.Filter(s, statsKeep, weir.Name("keep"))
	k := weir.KeyBy(f, func(r rec) string { return r.Key })
	c := weir.Process(k, func(_ string, st *int, _ rec, out []int) []int {
		*st++
		return append(out, *st)
	}, weir.Name("count"))
	out := &weir.Collect[int]{}
	weir.Sink(c, out, weir.Name("out"))
	return out
}

// operator returns the aggregate of the chain whose name holds op.
func operator(t *testing.T, ops []weir.OperatorStats, op string) weir.OperatorStats {
	t.Helper()
	for _, o := range ops {
		if slices.Contains(strings.Split(o.Operator, "→"), op) {
			return o
		}
	}
	t.Fatalf("no chain holds %s in %+v", op, ops)
	return weir.OperatorStats{}
}

// checkStatsJob compares a finished statsJob's figures with a plain
// count of the input.
func checkStatsJob(t *testing.T, st weir.JobStats, in []rec, groups int, dist bool) {
	t.Helper()
	kept := 0
	load := make([]int64, groups)
	hash := exchange.KeyHasher[string](dist)
	for _, r := range in {
		if statsKeep(r) {
			kept++
			load[kgs.KeyGroupOf(hash(r.Key), groups)]++
		}
	}
	// What each operator takes in and sends on, counted plainly; a chain
	// takes in what its first operator does and sends what its last one
	// does (a sink sends nothing on).
	type io struct{ in, out int }
	want := map[string]io{"src": {len(in), len(in)}, "keep": {len(in), kept}, "count": {kept, kept}, "out": {kept, 0}}
	ops := st.Operators()
	for _, o := range ops {
		chain := strings.Split(o.Operator, "→")
		if w := (io{want[chain[0]].in, want[chain[len(chain)-1]].out}); o.RecordsIn != int64(w.in) || o.RecordsOut != int64(w.out) {
			t.Errorf("chain %s took %d and sent %d records, want %d and %d", o.Operator, o.RecordsIn, o.RecordsOut, w.in, w.out)
		}
	}
	src, cnt := operator(t, ops, "src"), operator(t, ops, "count")
	if cnt.Operator != src.Operator {
		loads := st.Loads()
		if len(loads) != 1 || loads[0].Operator != cnt.Operator || !slices.Equal(loads[0].Counts, load) {
			t.Errorf("key-group loads %v, want %s: %v", loads, cnt.Operator, load)
		}
		// Each instance's key groups, counted where the records were
		// sent, add up to the records it took in, and together they are
		// the plain count.
		got := make([]int64, groups)
		for _, in := range st.Instances() {
			if in.Operator != cnt.Operator {
				continue
			}
			var sum int64
			for k, n := range in.KeyGroups {
				got[in.KeyGroupLo+k] += n
				sum += n
			}
			if sum != in.RecordsIn {
				t.Errorf("%s#%d: its key groups hold %d records, it took in %d", in.Operator, in.Instance, sum, in.RecordsIn)
			}
		}
		if !slices.Equal(got, load) {
			t.Errorf("the instances' key-group loads are %v, want %v", got, load)
		}
	}
	for _, in := range st.Instances() {
		if busy := in.Useful + in.Idle + in.Backpressure; busy > in.Lifetime+time.Millisecond || busy < in.Lifetime*8/10-10*time.Millisecond {
			t.Errorf("%s#%d: useful %v + idle %v + backpressure %v far from its lifetime %v", in.Operator, in.Instance,
				in.Useful, in.Idle, in.Backpressure, in.Lifetime)
		}
	}
}

func TestStatsCountRecords(t *testing.T) {
	in := statsInput(30000)
	for _, w := range []int{1, 2, 4} {
		t.Run(fmt.Sprint("workers=", w), func(t *testing.T) {
			j := weir.NewJob("stats", weir.Workers(w), weir.EpochRecords(1000), weir.KeyGroups(64))
			statsJob(j, in)
			if err := j.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			st := j.Stats()
			if len(st.Processes) != 1 || st.Processes[0].Time == 0 || !st.Processes[0].Final {
				t.Fatalf("processes %+v", st.Processes)
			}
			checkStatsJob(t, st, in, 64, false)
		})
	}
}

func TestStatsTwoProcesses(t *testing.T) {
	in := statsInput(30000)
	nets := transport.NewLocal(2)
	jobs := make([]*weir.Job, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range jobs {
		jobs[i] = weir.NewJob("stats", weir.Workers(2), weir.EpochRecords(1000), weir.KeyGroups(64), weir.WithNetwork(nets[i]))
		statsJob(jobs[i], in)
		wg.Go(func() { errs[i] = jobs[i].Run(ctx) })
	}
	wg.Wait()
	for i, j := range jobs {
		if errs[i] != nil {
			t.Fatalf("process %d: %v", i, errs[i])
		}
		st := j.Stats()
		if st.Self != i || len(st.Processes) != 2 {
			t.Fatalf("process %d sees %d processes as %d", i, len(st.Processes), st.Self)
		}
		for p, ps := range st.Processes {
			if ps.Process != p || ps.Time == 0 || !ps.Final || len(ps.Instances) == 0 {
				t.Fatalf("process %d's view of process %d: %+v", i, p, ps)
			}
			for _, in := range ps.Instances {
				if in.Process != p {
					t.Errorf("process %d's view: instance %s#%d of process %d listed under %d", i, in.Operator, in.Instance, in.Process, p)
				}
			}
			if len(ps.Peers) != 1 || ps.Peers[0].Peer != 1-p || ps.Peers[0].FramesOut == 0 {
				t.Errorf("process %d's traffic: %+v", p, ps.Peers)
			}
		}
		checkStatsJob(t, st, in, 64, true)
		var crossed int64
		for _, in := range st.Instances() {
			crossed += in.BytesOut
		}
		if crossed == 0 {
			t.Errorf("process %d: no instance sent bytes to the other process", i)
		}
	}
}

// slowSink takes 2 ms per batch.
type slowSink struct{ n int }

func (s *slowSink) Write(v []rec) error {
	time.Sleep(2 * time.Millisecond)
	s.n += len(v)
	return nil
}

func (s *slowSink) Close() error { return nil }

// A slow sink holds its senders back: they are backpressured most of
// their lives, while the sink hardly waits for input.
func TestStatsBackpressure(t *testing.T) {
	in := statsInput(12000)
	j := weir.NewJob("slow", weir.Workers(2), weir.BatchSize(64), weir.QueueDepth(2), weir.EpochRecords(2000))
	s := weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 64})
	sink := &slowSink{}
	weir.Sink(s, sink, weir.Name("slow"))
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sink.n != len(in) {
		t.Fatalf("sink wrote %d records, want %d", sink.n, len(in))
	}
	ops := j.Stats().Operators()
	src, slow := operator(t, ops, "src"), operator(t, ops, "slow")
	if src.Operator == slow.Operator {
		t.Fatalf("source and sink fused into %s", src.Operator)
	}
	if src.Backpressure < src.Lifetime/2 {
		t.Errorf("source: backpressure %v of a lifetime %v; the sink is slow", src.Backpressure, src.Lifetime)
	}
	if slow.Idle > slow.Lifetime/4 {
		t.Errorf("sink: idle %v of a lifetime %v; its input was always full", slow.Idle, slow.Lifetime)
	}
	if slow.Useful < slow.Lifetime/2 {
		t.Errorf("sink: useful %v of a lifetime %v", slow.Useful, slow.Lifetime)
	}
}

// With checkpoints on, every process reports the parts it wrote.
func TestStatsCheckpoints(t *testing.T) {
	in := statsInput(20000)
	j := weir.NewJob("ckpt", weir.Workers(2), weir.EpochRecords(1000), weir.KeyGroups(64), weir.Checkpoints(t.TempDir(), 4, 3))
	s := weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 64})
	k := weir.KeyBy(s, func(r rec) string { return r.Key })
	c := weir.Process(k, func(_ string, st *int, _ rec, out []int) []int {
		*st++
		return append(out, *st)
	})
	weir.Sink(c, &weir.Collect[int]{})
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	cps := j.Stats().Processes[0].Checkpoints
	if len(cps) == 0 {
		t.Fatal("no checkpoint figures")
	}
	for i, c := range cps {
		if c.Bytes <= 0 || c.Duration < c.Alignment || c.Alignment < 0 || c.Start == 0 || c.Epoch == 0 {
			t.Errorf("checkpoint %+v", c)
		}
		if i > 0 && c.ID <= cps[i-1].ID {
			t.Errorf("checkpoints out of order: %d after %d", c.ID, cps[i-1].ID)
		}
	}
	if len(cps) > 1 && !cps[len(cps)-2].Complete {
		t.Errorf("checkpoint %d not complete: %+v", cps[len(cps)-2].ID, cps)
	}
}

// Two tasks whose operators have the same name keep figures of their
// own: the second chain's name gets " (2)", and each takes in every record
// (they were once merged into one, counted twice, by two goroutines).
func TestStatsSameNames(t *testing.T) {
	in := statsInput(5000)
	j := weir.NewJob("same", weir.Workers(2), weir.EpochRecords(500))
	s := weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 64})
	a := weir.Process(weir.KeyBy(s, func(r rec) string { return r.Key }), func(_ string, st *int, r rec, out []rec) []rec {
		return append(out, r)
	}, weir.Name("x"))
	b := weir.Process(weir.KeyBy(a, func(r rec) int { return r.ID }), func(_ int, st *int, r rec, out []rec) []rec {
		return append(out, r)
	}, weir.Name("x"))
	out := &weir.Collect[rec]{}
	weir.Sink(b, out, weir.Name("out"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := j.Run(ctx); err != nil {
		t.Fatal(err)
	}
	ops := j.Stats().Operators()
	got := map[string]int64{}
	for _, o := range ops {
		got[o.Operator] = o.RecordsIn
	}
	if got["x"] != int64(len(in)) || got["x (2)"] != int64(len(in)) {
		t.Errorf("records in by chain %v, want %d for x and for x (2)", got, len(in))
	}
	topo, err := j.Topology()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tk := range topo.Tasks {
		names = append(names, tk.Name)
	}
	if !slices.Contains(names, "x") || !slices.Contains(names, "x (2)") {
		t.Errorf("topology tasks %q, want x and x (2)", names)
	}
}

// A paced source spends most of its time waiting for records to be due:
// its figures count that as idle, not useful, for the generators and for
// weir.Paced alike.
func TestStatsPacedSourceIdle(t *testing.T) {
	for name, src := range map[string]weir.Input[gen.YSBEvent]{
		"generator": gen.YSB{Rate: 4000, Events: 4000, BatchSize: 100},
		"Paced":     weir.Paced[gen.YSBEvent](gen.YSB{Events: 4000, BatchSize: 100}, 4000),
	} {
		t.Run(name, func(t *testing.T) {
			j := weir.NewJob("paced", weir.Workers(1), weir.BatchInterval(50*time.Millisecond))
			s := weir.Source(j, "src", src)
			weir.Sink(s, &weir.Collect[gen.YSBEvent]{}, weir.Name("out"))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := j.Run(ctx); err != nil {
				t.Fatal(err)
			}
			for _, in := range j.Stats().Instances() {
				if in.Source && in.Useful > in.Idle/2 {
					t.Errorf("%s#%d: useful %v, idle %v over %v: a source paced to a second's records should wait most of it",
						in.Operator, in.Instance, in.Useful, in.Idle, in.Lifetime)
				}
			}
		})
	}
}
