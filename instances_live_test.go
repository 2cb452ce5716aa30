package weir_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
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

// liveWant is what liveJob gives over in: the count per key and window,
// and how often each running sum comes out.
func liveWant(in []rec) (map[string]int64, map[string]int) {
	wins := map[string]int64{}
	sum := map[string]int{}
	sums := map[string]int{}
	for _, r := range in {
		wins[fmt.Sprintf("%s@%d", r.Key, r.TS/50*50)]++
		sum[r.Key]++
		sums[fmt.Sprintf("%s=%d", r.Key, sum[r.Key])]++
	}
	return wins, sums
}

// checkLive compares liveJob's outputs with the plain computation.
func checkLive(t *testing.T, in []rec, wins *weir.Collect[weir.WindowResult[string, int64]], sums *weir.Collect[string]) {
	t.Helper()
	wantWins, wantSums := liveWant(in)
	got := countsOf(wins.Records())
	if len(got) != len(wantWins) {
		t.Errorf("%d windows; want %d", len(got), len(wantWins))
	}
	for k, v := range wantWins {
		if got[k] != v {
			t.Errorf("window %s counted %d; want %d", k, got[k], v)
			break
		}
	}
	gs := map[string]int{}
	for _, s := range sums.Records() {
		gs[s]++
	}
	if len(gs) != len(wantSums) {
		t.Errorf("%d running sums; want %d", len(gs), len(wantSums))
	}
	for k, v := range wantSums {
		if gs[k] != v {
			t.Errorf("running sum %s seen %d times; want %d", k, gs[k], v)
			break
		}
	}
}

// The instances of the keyed operators run only while they own key
// groups: a job on 4 workers whose keyed operators start over 1 runs one
// instance of each keyed chain; rescaled to 4, 2 and 3 it runs that many
// (the others end, or start), and its results are the plain
// computation's, with checkpoints and without.
func TestInstancesStartAndEnd(t *testing.T) {
	in := make([]rec, 40000)
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", i%97), TS: int64(i) / 16}
	}
	for _, ckpt := range []bool{false, true} {
		t.Run(fmt.Sprintf("checkpoints=%v", ckpt), func(t *testing.T) {
			opts := []weir.JobOption{weir.ActiveInstances(1)}
			if ckpt {
				opts = append(opts, weir.Checkpoints(t.TempDir(), 3, 3))
			}
			j, wins, sums := liveJob(in, opts...)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- j.Run(ctx) }()
			// counts waits until each keyed chain runs n instances.
			counts := func(n int) {
				t.Helper()
				deadline := time.Now().Add(20 * time.Second)
				for {
					st := j.Stats()
					c, s := running(st, "count"), running(st, "sum")
					if c == n && s == n {
						return
					}
					select {
					case err := <-done:
						t.Fatalf("the job ended (%v) while %d instances of the window and %d of the process ran; want %d", err, c, s, n)
					default:
					}
					if time.Now().After(deadline) {
						t.Fatalf("%d instances of the window and %d of the process run; want %d", c, s, n)
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			for j.Metrics().Records < 1000 {
				time.Sleep(5 * time.Millisecond)
			}
			counts(1)
			for _, n := range []int{4, 2, 3} {
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
				counts(n)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			checkLive(t, in, wins, sums)
		})
	}
}
