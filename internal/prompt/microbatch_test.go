package prompt

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/exchange"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/window"
)

// owner is a receiver's window state for a count per key (global
// window): the partials the rounds merge into it and the raw records its
// inbox would bring.
type owner struct {
	mu     sync.Mutex
	counts map[string]int64
	raw    int64
}

func (o *owner) MergeOne(p *exchange.Partial[string, int64]) {
	o.mu.Lock()
	o.counts[p.K] += p.Acc
	o.mu.Unlock()
}

func (o *owner) Add(r *dataflow.Krec[string, string]) {
	o.mu.Lock()
	o.counts[r.K]++
	o.raw++
	o.mu.Unlock()
}

// inbox is a receiver's input as a remote outlet: raw batches go straight
// into its owner (as the window task's Batch would), markers are counted.
type inbox struct {
	o     *owner
	marks int
}

func (in *inbox) Send(b any) error {
	kb := b.(*dataflow.Kbatch[string, string])
	for i := range kb.Recs {
		in.o.Add(&kb.Recs[i])
	}
	return nil
}

func (in *inbox) Mark(progress.Marker) error { in.marks++; return nil }

// roundsRun runs epochs of words through senders micro-batch senders and
// the receivers of table rt under strategy s, and returns every receiver's
// owner and the exchange's figures.
func roundsRun(t *testing.T, s partition.Strategy, counting bool, senders int, rt *partition.Table, epochs [][][]string) ([]*owner, *exchange.EdgeStats) {
	t.Helper()
	receivers := rt.Instances()
	j := &dataflow.Graph{Cfg: dataflow.JobConfig{BatchSize: 64, EpochRecords: 1000}}
	st := &exchange.EdgeStats{Name: "count", Strategy: s}
	x := NewMicroShared[string, string, int64](j, st, s, func(w string) string { return w }, window.Spec{Kind: window.Global},
		func() int64 { return 0 }, func(a int64, _ string) int64 { return a + 1 }, func(a, b int64) int64 { return a + b }, time.Now)
	if counting {
		x.Counting(func(a, n int64) int64 { return a + n })
	}
	owners := make([]*owner, receivers)
	outlets := make([]runtime.Outlet, receivers)
	for r := range owners {
		owners[r] = &owner{counts: map[string]int64{}}
		outlets[r] = runtime.RemoteOutlet(&inbox{o: owners[r]})
	}
	done := make(chan struct{})
	defer close(done)
	exs := make([]*microEx[string, string, int64], senders)
	for i := range exs {
		// Each sender has outlets of its own, as in a job.
		outs := make([]runtime.Outlet, receivers)
		for r := range outs {
			outs[r] = runtime.RemoteOutlet(&inbox{o: owners[r]})
		}
		exs[i] = NewMicroEx(x, dataflow.ExchangeCtx{Outlets: outs, Sender: i, Senders: senders, Routing: rt, Done: done}, j)
	}
	tasks := make([]*MicroTask[string, string, int64], receivers)
	for r := range tasks {
		var err error
		tasks[r], err = NewMicroTask(x, r, MicroOwner[string, string, int64](owners[r]), func() int64 { return progress.NoWatermark },
			Placement{Table: rt, Done: done})
		if err != nil {
			t.Fatal(err)
		}
	}
	for e, epoch := range epochs {
		m := progress.Marker{Epoch: progress.Epoch(e), Watermark: progress.NoWatermark, Final: e == len(epochs)-1}
		for i, words := range epoch {
			if err := exs[i].Push(&dataflow.Batch[string]{V: words}); err != nil {
				t.Fatal(err)
			}
			if err := exs[i].Mark(m); err != nil {
				t.Fatal(err)
			}
		}
		// The receivers meet at the round, each on its goroutine.
		var wg sync.WaitGroup
		errs := make([]error, receivers)
		for r := range tasks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[r] = tasks[r].Run(m)
			}()
		}
		wg.Wait()
		for r, err := range errs {
			if err != nil {
				t.Fatalf("epoch %d: receiver %d: %v", e, r, err)
			}
		}
	}
	return owners, st
}

// zipfWords draws n words of keys keys, Zipf-distributed with s.
func zipfWords(rng *rand.Rand, n, keys int, s float64) []string {
	z := rand.NewZipf(rng, s, 1, uint64(keys-1))
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%d", z.Uint64())
	}
	return out
}

// Every record is counted once, at the owner of its key group, whether a
// round folded it (a hot key, split over several tasks) or its sender sent
// it raw (a cold key); under prompt the hot keys go through the rounds
// and the cold ones do not, under pkg every record does.
func TestRoundsCountEveryRecordOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range []partition.Strategy{partition.Prompt, partition.PKG} {
		for _, counting := range []bool{false, true} {
			t.Run(fmt.Sprint(s, "/counting=", counting), func(t *testing.T) {
				const senders, receivers = 3, 4
				var epochs [][][]string
				want := map[string]int64{}
				for range 6 {
					var epoch [][]string
					for range senders {
						words := zipfWords(rng, 5000, 3000, 1.3)
						for _, w := range words {
							want[w]++
						}
						epoch = append(epoch, words)
					}
					epochs = append(epochs, epoch)
				}
				rt := partition.Contiguous(128, receivers)
				owners, st := roundsRun(t, s, counting, senders, rt, epochs)
				hasher, _ := partition.Hasher[string]()
				var raw int64
				for r, o := range owners {
					raw += o.raw
					for w, n := range o.counts {
						if own := rt.Route(hasher(w)); own != r {
							t.Errorf("%v: %q counted at receiver %d; its owner is %d", s, w, r, own)
						}
						if n != want[w] {
							t.Errorf("%v: count(%q) = %d; want %d", s, w, n, want[w])
						}
					}
				}
				got := 0
				for _, o := range owners {
					got += len(o.counts)
				}
				if got != len(want) {
					t.Errorf("%v: %d keys counted; want %d", s, got, len(want))
				}
				snap := st.Snapshot()
				switch s {
				case partition.Prompt:
					if raw == 0 || raw >= 90000 {
						t.Errorf("prompt: %d of 90000 records went raw; want the cold keys' (some, not all)", raw)
					}
					if snap.SplitKeys == 0 {
						t.Errorf("prompt: no key split over the tasks: %+v", snap)
					}
				case partition.PKG:
					if raw != 0 {
						t.Errorf("pkg: %d records went raw; want every record deposited", raw)
					}
				}
			})
		}
	}
}

// A table that gives key groups to the first two of four instances (a
// rescale to two in one process) bounds the rounds: the pkg senders choose
// among two blocks, the rounds take two tasks, and the other receivers
// fold and own nothing.
func TestRoundsWithinTheSpan(t *testing.T) {
	owner := make([]int, 128)
	for kg := range owner {
		owner[kg] = kg % 2
	}
	rt, err := partition.NewTable(0, 4, owner)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range []partition.Strategy{partition.Prompt, partition.PKG} {
		var epochs [][][]string
		for range 3 {
			epochs = append(epochs, [][]string{zipfWords(rng, 4000, 500, 1.2), zipfWords(rng, 4000, 500, 1.2)})
		}
		owners, st := roundsRun(t, s, false, 2, rt, epochs)
		var n int64
		for r, o := range owners {
			for _, c := range o.counts {
				n += c
			}
			if r >= 2 && len(o.counts) > 0 {
				t.Errorf("%v: receiver %d, outside the span, owns %d keys", s, r, len(o.counts))
			}
		}
		if n != 24000 {
			t.Errorf("%v: %d records counted; want 24000", s, n)
		}
		if snap := st.Snapshot(); snap.MapTasks != 2 {
			t.Errorf("%v: the last round took %d tasks; want the span's 2 (%+v)", s, snap.MapTasks, snap)
		}
	}
}
