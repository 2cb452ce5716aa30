package weir_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/pebblestate"
)

// running counts, by chain holding op, the instances that run now.
func running(st weir.JobStats, op string) int {
	n := 0
	for _, in := range st.Instances() {
		if slices.Contains(strings.Split(in.Operator, "→"), op) && in.Running {
			n++
		}
	}
	return n
}

// stagesJob is liveJob with a keyed Process after the windows, which
// numbers each key's windows.
func stagesJob(in []rec, opts ...weir.JobOption) (*weir.Job, *weir.Collect[weir.WindowResult[string, int64]], *weir.Collect[string]) {
	return liveJobThen(in, func(counts weir.Stream[weir.WindowResult[string, int64]], out *weir.Collect[string]) {
		// The n-th window of a key, whatever the order one marker fires them in.
		nth := weir.Process(weir.KeyBy(counts, func(w weir.WindowResult[string, int64]) string { return w.Key }),
			func(k string, n *int, _ weir.WindowResult[string, int64], out []string) []string {
				*n++
				return append(out, fmt.Sprintf("%s#%d", k, *n))
			}, weir.Name("nth"))
		weir.Sink(nth, out, weir.Name("nths"))
	}, opts...)
}

// checkStages compares stagesJob's outputs with the plain computation.
func checkStages(t *testing.T, in []rec, wins *weir.Collect[weir.WindowResult[string, int64]], out *weir.Collect[string]) {
	t.Helper()
	wantWins := map[string]int64{}
	want := map[string]int{}
	n := map[string]int{}
	for _, r := range in {
		wantWins[fmt.Sprintf("%s@%d", r.Key, r.TS/50*50)]++
		n[r.Key]++
		want[fmt.Sprintf("%s=%d", r.Key, n[r.Key])]++
	}
	perKey := map[string]int{}
	for w := range wantWins {
		k, _, _ := strings.Cut(w, "@")
		perKey[k]++
		want[fmt.Sprintf("%s#%d", k, perKey[k])]++
	}
	checkLiveOutputs(t, wins, out, wantWins, want)
}

// The instances of the keyed operators run only while they own key
// groups: a job on 4 workers whose keyed operators start over 1 runs one
// instance of each keyed chain; rescaled to 4, 2, 3 and 4 it runs that
// many (the others end, or start again), and its results are the plain
// computation's, with checkpoints and without, and with epochs of a
// count of records. Its windows feed another keyed operator, whose
// instances end and start with theirs.
func TestInstancesStartAndEnd(t *testing.T) {
	in := make([]rec, 40000)
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", i%97), TS: int64(i) / 16}
	}
	for _, c := range []struct{ ckpt, count bool }{{false, false}, {true, false}, {true, true}} {
		t.Run(fmt.Sprintf("checkpoints=%v/count-epochs=%v", c.ckpt, c.count), func(t *testing.T) {
			opts := []weir.JobOption{weir.ActiveInstances(1)}
			if c.ckpt {
				opts = append(opts, weir.Checkpoints(t.TempDir(), 3, 3))
			}
			if c.count {
				opts = append(opts, weir.EpochRecords(40))
			}
			j, wins, out := stagesJob(in, opts...)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- j.Run(ctx) }()
			// counts waits until each keyed chain runs n instances.
			counts := func(n int) {
				t.Helper()
				deadline := time.Now().Add(20 * time.Second)
				waitRunning(t, done, fmt.Sprintf("%d instances of each keyed chain running", n), func() bool {
					st := j.Stats()
					c, x, s := running(st, "count"), running(st, "nth"), running(st, "sum")
					if time.Now().After(deadline) {
						t.Fatalf("%d instances of the window, %d of nth and %d of sum run; want %d", c, x, s, n)
					}
					return c == n && x == n && s == n
				})
			}
			waitRunning(t, done, "reading 1000 records", func() bool { return j.Metrics().Records >= 1000 })
			counts(1)
			rescaleThrough(t, ctx, j, done, []int{4, 2, 3, 4}, counts)
			checkStages(t, in, wins, out)
		})
	}
}

// A job that shrank its keyed operators from 4 instances to 2 and then
// crashed restarts from a checkpoint taken after the shrink with 2
// instances of each keyed chain running, the others absent, and its
// results are the plain computation's.
func TestInstancesEndedAcrossRestore(t *testing.T) {
	in := rescaleInput(24000)
	want := withoutTTL(rescaleModel(in))
	d := t.TempDir()
	opts := func() []weir.JobOption {
		return []weir.JobOption{weir.Workers(4), weir.BatchInterval(20 * time.Millisecond), weir.KeyGroups(32), weir.Checkpoints(d, 3, 3)}
	}
	var crash atomic.Bool
	first := weir.NewJob("crash", opts()...)
	rescaleOpsAt(first, in, 8000, crashOn(&crash))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	wait := func(_ *weir.Job, what string, ok func() bool) { waitRunning(t, done, what, ok) }
	wait(first, "reading 2000 records", func() bool { return first.Metrics().Records >= 2000 })
	if n := running(first.Stats(), "tumbling"); n != 4 {
		t.Errorf("%d instances of tumbling run at start; want 4", n)
	}
	m, err := first.Rescale(2, weir.WithStrategy(weir.Batched))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	wait(first, "2 instances of tumbling running", func() bool { return running(first.Stats(), "tumbling") == 2 })
	chk := newestCheckpoint(d)
	wait(first, "a checkpoint after the shrink", func() bool { return newestCheckpoint(d) > chk })
	crash.Store(true)
	if err := <-done; err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("first run: %v; want the crash", err)
	}
	second := weir.NewJob("crash", opts()...)
	out := rescaleOpsAt(second, in, 8000, crashOn(new(atomic.Bool)))
	go func() { done <- second.Run(ctx) }()
	// (Its records count from the checkpoint's on.)
	wait(second, "its instances running", func() bool { return running(second.Stats(), "tumbling") > 0 })
	time.Sleep(100 * time.Millisecond)
	if n := running(second.Stats(), "tumbling"); n != 2 {
		t.Errorf("%d instances of tumbling run after the restore; want 2", n)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if second.Metrics().RestoredFrom == 0 {
		t.Fatal("no checkpoint restored")
	}
	checkOps(t, out.Records(), want)
}

// waitRunning waits until ok says so, failing if the job (done) ends
// first.
func waitRunning(t *testing.T, done chan error, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		select {
		case err := <-done:
			t.Fatalf("the job ended (%v) before %s", err, what)
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// The same with the keyed state in Pebble: an instance that starts again
// opens its store again, its earlier run's closed.
func TestInstancesPebble(t *testing.T) {
	in := make([]rec, 48000)
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", i%97), TS: int64(i) / 16}
	}
	j, wins, out := stagesJob(in, pebblestate.Dir(t.TempDir()))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- j.Run(ctx) }()
	waitRunning(t, done, "reading 1000 records", func() bool { return j.Metrics().Records >= 1000 })
	rescaleThrough(t, ctx, j, done, []int{2, 4, 1, 3}, func(n int) {
		waitRunning(t, done, fmt.Sprintf("%d instances of count running", n), func() bool { return running(j.Stats(), "count") == n })
	})
	checkStages(t, in, wins, out)
}

// rescaleThrough rescales the running job j to each of ns in turn, by
// batched steps (asking again while it is busy with the last), calls
// check with each once its migration is done, and waits for the job's
// end (done).
func rescaleThrough(t *testing.T, ctx context.Context, j *weir.Job, done chan error, ns []int, check func(n int)) {
	t.Helper()
	for _, n := range ns {
		rescaleBatched(t, ctx, j, n)
		check(n)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// rescaleBatched rescales the running job j to n instances by batched
// steps, asking again while it is busy with the last, and waits for the
// migration.
func rescaleBatched(t *testing.T, ctx context.Context, j *weir.Job, n int) {
	t.Helper()
	m, err := j.Rescale(n, weir.WithStrategy(weir.Batched))
	for err != nil && strings.Contains(err.Error(), "ask again") {
		time.Sleep(20 * time.Millisecond)
		m, err = j.Rescale(n, weir.WithStrategy(weir.Batched))
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}
