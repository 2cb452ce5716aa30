package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A word count of three processes started with --elastic under weir
// launch: SIGTERM to process 2 makes it leave the job (its key groups and
// its shares of the input move to the others) and exit while the others
// run on (weir launch then exits 0: every process did), and the output
// is the reference count's.
func TestElasticLeaveOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	text := rescaleText(36_000)
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.csv")
	writeFile(t, in, text)
	addr := "127.0.0.1:" + strconv.Itoa(freePorts(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, weirBin, "launch", "-n", "3", "--", "run", "wordcount", "--input", in, "--out", out,
		"--rate", "3000", "--workers", "2", "--interval", "100ms", "--elastic", "--metrics", addr)
	errb := &lockedWriter{b: &strings.Builder{}}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stderr := errb.String
	pidOf := regexp.MustCompile(`process 2 pid (\d+)`)
	var pid int
	for pid == 0 {
		if m := pidOf.FindStringSubmatch(stderr()); m != nil {
			pid, _ = strconv.Atoi(m[1])
		}
		select {
		case err := <-done:
			t.Fatalf("the job ended before process 2 started: %v\n%s", err, stderr())
		case <-time.After(10 * time.Millisecond):
		}
	}
	waitOwners(t, addr, "process 0 to read", func(_ int, r int64) bool { return r > 3000 })
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Process 2 exits while the others still run.
	for syscall.Kill(pid, 0) == nil {
		select {
		case err := <-done:
			t.Fatalf("the job ended (%v) before process 2 left it\n%s", err, stderr())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("the job: %v\n%s", err, stderr())
	}
	if !strings.Contains(stderr(), "this process leaves the job") {
		t.Errorf("process 2 did not say it leaves:\n%s", stderr())
	}
	if got, want := readFile(t, out), wordcountCSV(text); got != want {
		t.Errorf("the output differs from the reference after process 2 left\n%s", firstDiff(got, want))
	}
}
