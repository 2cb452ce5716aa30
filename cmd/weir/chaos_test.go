package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// chaos runs `weir launch -n 3 --restart` with args and kills a random
// process with SIGKILL every gap, kills times, while the job runs. It
// returns launch's stderr.
func chaos(t *testing.T, kills int, gap time.Duration, args ...string) string {
	t.Helper()
	return chaosN(t, 3, kills, gap, args...)
}

// chaosN is chaos over procs processes.
func chaosN(t *testing.T, procs, kills int, gap time.Duration, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, weirBin, append([]string{"launch", "-n", strconv.Itoa(procs), "--restart", "30", "--"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	pids := map[int]int{} // process index -> pid of its latest start
	var log strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			var i, pid int
			if _, err := fmt.Sscanf(line, "weir launch: process %d pid %d", &i, &pid); err == nil {
				mu.Lock()
				pids[i] = pid
				mu.Unlock()
			}
			mu.Lock()
			log.WriteString(line + "\n")
			mu.Unlock()
		}
	}()
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	killed := 0
	for killed < kills {
		select {
		case <-done:
			t.Fatalf("the job ended after %d of %d kills; make its input longer\n%s", killed, kills, log.String())
		case <-time.After(gap):
		}
		mu.Lock()
		pid := pids[r.IntN(procs)]
		mu.Unlock()
		if pid != 0 && syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed++
		}
	}
	<-done
	if err := cmd.Wait(); err != nil {
		t.Fatalf("launch: %v\n%s", err, log.String())
	}
	return log.String()
}

// chaosJob runs a job's chaos test with state in memory and in Pebble:
// prepare writes the input to dir and returns the job's arguments, its
// output file and the expected output.
func chaosJob(t *testing.T, prepare func(dir string) (args []string, out, want string)) {
	for _, state := range []string{"memory", "pebble"} {
		t.Run(state, func(t *testing.T) {
			dir := t.TempDir()
			args, out, want := prepare(dir)
			args = append(args, "--workers", "1", "--interval", "100ms", "--checkpoint-dir", filepath.Join(dir, "ckpt"),
				"--checkpoint-interval", "1s", "--state", state, "--state-dir", filepath.Join(dir, "state"))
			log := chaos(t, 5, 1500*time.Millisecond, args...)
			if got := readFile(t, out); got != want {
				t.Errorf("output differs from the reference\n%s\n%s", firstDiff(got, want), log)
			}
			if !strings.Contains(log, "restoring checkpoint") {
				t.Errorf("no run restored a checkpoint:\n%s", log)
			}
		})
	}
}

// Word count over 3 processes with a checkpoint every second survives
// five SIGKILLs: the output equals the reference, nothing lost or counted
// twice.
func TestChaosWordcount(t *testing.T) {
	chaosJob(t, func(dir string) ([]string, string, string) {
		var text strings.Builder
		for i := range 150_000 {
			fmt.Fprintf(&text, "w%d v%d the\n", i%1997, i%31)
		}
		in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "words.csv")
		writeFile(t, in, text.String())
		return []string{"run", "wordcount", "--input", in, "--out", out, "--rate", "12000"}, out, wordcountCSV(text.String())
	})
}

// The same for YSB over a file of events.
func TestChaosYSB(t *testing.T) {
	chaosJob(t, func(dir string) ([]string, string, string) {
		evs, camp := ysbInput(130_000, 21, 36_000)
		events, campaigns, out := filepath.Join(dir, "events.jsonl"), filepath.Join(dir, "campaigns.csv"), filepath.Join(dir, "out.csv")
		writeLines(t, events, jsonLines(evs))
		writeCampaigns(t, campaigns, camp)
		return []string{"run", "ysb", "--events", events, "--campaigns", campaigns, "--out", out, "--rate", "10000"}, out, ysbCSV(t, evs, camp)
	})
}

// Every strategy and auto in one, two and three processes with two
// workers each and a checkpoint every second survives three SIGKILLs: the
// word count equals the reference.
func TestChaosStrategies(t *testing.T) {
	var text strings.Builder
	for i := range 60_000 {
		fmt.Fprintf(&text, "w%d v%d the\n", i%1997, i%31)
	}
	want := wordcountCSV(text.String())
	for _, strategy := range []string{"prompt", "pkg", "hash", "roundrobin", "auto"} {
		for procs := 1; procs <= 3; procs++ {
			t.Run(fmt.Sprint(strategy, "/processes=", procs), func(t *testing.T) {
				dir := t.TempDir()
				in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "words.csv")
				writeFile(t, in, text.String())
				log := chaosN(t, procs, 3, 1500*time.Millisecond, "run", "wordcount", "--input", in, "--out", out, "--rate", "8000",
					"--partitioning", strategy, "--workers", "2", "--interval", "100ms", "--checkpoint-dir", filepath.Join(dir, "ckpt"),
					"--checkpoint-interval", "1s")
				if got := readFile(t, out); got != want {
					t.Errorf("output differs from the reference\n%s\n%s", firstDiff(got, want), log)
				}
				if !strings.Contains(log, "restoring checkpoint") {
					t.Errorf("no run restored a checkpoint:\n%s", log)
				}
			})
		}
	}
}
