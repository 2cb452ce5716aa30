package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A word count over 2 processes with checkpoints, whose keyed operators
// start on process 0's first instance, is spread over all 4 instances in
// fluid steps, one key group at a time; in the middle of the migration
// process 1 is killed with SIGKILL. The job restarts from its latest
// checkpoint, which recorded the routing tables in force and the steps
// still to come, finishes the migration (process 0's figures come to show
// 4 owners) and writes exactly the reference count: nothing lost or
// counted twice.
func TestRescaleKilledDuringMigration(t *testing.T) {
	dir := t.TempDir()
	text := rescaleText(60_000)
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.csv")
	writeFile(t, in, text)
	mp, up := freePorts(t), freePorts(t)
	for up >= mp-1 && up <= mp+1 {
		up = freePorts(t)
	}
	metrics := "127.0.0.1:" + strconv.Itoa(mp)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, weirBin, "launch", "-n", "2", "--restart", "5", "--", "run", "wordcount",
		"--input", in, "--out", out, "--rate", "3000", "--workers", "2", "--active-instances", "1",
		"--interval", "100ms", "--checkpoint-dir", filepath.Join(dir, "ckpt"), "--checkpoint-interval", "500ms",
		"--metrics", metrics, "--ui", "127.0.0.1:"+strconv.Itoa(up))
	w := watchLaunch(t, cmd, "")
	logs := w.logs
	waitOwners(t, metrics, "process 0 to read with 1 instance owning key groups", func(o int, r int64) bool { return o == 1 && r > 0 })
	r := mustSucceed(t, "rescale", "--to", "4", "--strategy", "fluid", "127.0.0.1:"+strconv.Itoa(up+1))
	m := announced.FindStringSubmatch(r.stdout)
	if m == nil || m[3] != strconv.Itoa(moves(1, 4)) {
		t.Fatalf("weir rescale printed %q; want %d key groups moving", r.stdout, moves(1, 4))
	}
	// Let some steps take force and a checkpoint or two be taken, then
	// kill process 1 while steps remain (fluid: one per 100 ms epoch).
	time.Sleep(2500 * time.Millisecond)
	pid := w.pid(1)
	if pid == 0 {
		t.Fatalf("no pid for process 1:\n%s", logs())
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitOwners(t, metrics, "4 instances to own key groups after the restart", func(o int, _ int64) bool { return o == 4 })
	<-w.done
	if err := cmd.Wait(); err != nil {
		t.Fatalf("launch: %v\n%s", err, logs())
	}
	if !strings.Contains(logs(), "restoring checkpoint") {
		t.Errorf("no run restored a checkpoint:\n%s", logs())
	}
	if got, want := readFile(t, out), wordcountCSV(text); got != want {
		t.Errorf("the output differs from the reference\n%s\n%s", firstDiff(got, want), logs())
	}
}

// An elastic word count of two processes, with checkpoints, is joined by
// a third (launch --slots 3 --join-after); while key groups move onto it,
// it is killed with SIGKILL. The job restarts from its latest checkpoint
// (the members alone, the joiner's key groups back on their instances),
// the third process joins again, and the output is exactly the
// reference count.
func TestJoinKilledDuringMigration(t *testing.T) {
	dir := t.TempDir()
	text := rescaleText(45_000)
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.csv")
	writeFile(t, in, text)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, weirBin, "launch", "-n", "2", "--slots", "3", "--join-after", "1500ms", "--restart", "3", "--",
		"run", "wordcount", "--input", in, "--out", out, "--rate", "3000", "--workers", "2", "--interval", "100ms",
		"--checkpoint-dir", filepath.Join(dir, "ckpt"), "--checkpoint-interval", "500ms")
	w := watchLaunch(t, cmd, "a process joins the job")
	logs := w.logs
	select {
	case <-w.marked:
	case <-w.done:
		t.Fatalf("the job ended before a process joined:\n%s", logs())
	}
	// The join takes force about 1.5 s later, then its steps, one per
	// 100 ms epoch: kill the joiner in the middle of them.
	time.Sleep(2200 * time.Millisecond)
	pid := w.pid(2)
	if pid == 0 {
		t.Fatalf("no pid for process 2:\n%s", logs())
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-w.done
	if err := cmd.Wait(); err != nil {
		t.Fatalf("launch: %v\n%s", err, logs())
	}
	for _, want := range []string{"starting the job again", "restoring checkpoint"} {
		if !strings.Contains(logs(), want) {
			t.Errorf("the logs do not say %q:\n%s", want, logs())
		}
	}
	if n := strings.Count(logs(), "a process joins the job"); n < 2 {
		t.Errorf("a process joined %d times; want again after the restart:\n%s", n, logs())
	}
	if got, want := readFile(t, out), wordcountCSV(text); got != want {
		t.Errorf("the output differs from the reference\n%s\n%s", firstDiff(got, want), logs())
	}
}

// launchWatch reads the standard error of a weir launch it started: the
// pid of each process's latest start, every line, and a signal on marked
// for each line that contains its mark. done closes at the end of it.
type launchWatch struct {
	mu     sync.Mutex
	pids   map[int]int
	log    strings.Builder
	marked chan struct{}
	done   chan struct{}
}

func watchLaunch(t *testing.T, cmd *exec.Cmd, mark string) *launchWatch {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &launchWatch{pids: map[int]int{}, marked: make(chan struct{}, 8), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var i, pid int
			w.mu.Lock()
			if _, err := fmt.Sscanf(sc.Text(), "weir launch: process %d pid %d", &i, &pid); err == nil {
				w.pids[i] = pid
			}
			w.log.WriteString(sc.Text() + "\n")
			w.mu.Unlock()
			if mark != "" && strings.Contains(sc.Text(), mark) {
				select {
				case w.marked <- struct{}{}:
				default:
				}
			}
		}
	}()
	return w
}

// pid is the pid of process i's latest start (0: none yet).
func (w *launchWatch) pid(i int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pids[i]
}

// logs is every line read so far.
func (w *launchWatch) logs() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.log.String()
}
