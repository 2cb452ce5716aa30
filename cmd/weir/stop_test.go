package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopText is a word count input long enough to be stopped partway at
// the rates below.
func stopText(t *testing.T, dir string) (string, string) {
	var b strings.Builder
	for i := range 30_000 {
		fmt.Fprintf(&b, "w%d w%d x%d\n", i%97, i%13, i%1009)
	}
	text := filepath.Join(dir, "text.txt")
	writeFile(t, text, b.String())
	return text, b.String()
}

// signalled starts weir with args, sends sig after wait (and again after
// again, if positive), and returns its result and how long it ran after
// the first signal.
func signalled(t *testing.T, args []string, wait time.Duration, sig syscall.Signal, again time.Duration) (result, time.Duration) {
	t.Helper()
	cmd := exec.Command(weirBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(wait)
	sent := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	if again > 0 {
		time.Sleep(again)
		cmd.Process.Signal(sig)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("weir %s did not end a minute after %v\nstderr: %s", strings.Join(args, " "), sig, errb.String())
	}
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r, time.Since(sent)
}

// SIGTERM to a job with checkpoints takes it to a final checkpoint and
// exits 0 with a summary; the same command then resumes and writes
// exactly the output of a run never stopped. Ctrl-C does the same.
func TestStopCleanlyAtCheckpoint(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		dir := t.TempDir()
		text, content := stopText(t, dir)
		out := filepath.Join(dir, "out.csv")
		args := []string{"run", "wordcount", "--input", text, "--out", out, "--checkpoint-dir", filepath.Join(dir, "ckpt"),
			"--interval", "50ms", "--checkpoint-every", "2", "--rate", "10000", "--workers", "2"}
		r, _ := signalled(t, args, 1500*time.Millisecond, sig, 0)
		if r.code != 0 || !strings.Contains(r.stderr, "stopped cleanly at checkpoint") {
			t.Fatalf("%v: exit %d; want 0 and a summary of the clean stop\nstderr: %s", sig, r.code, r.stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: the stopped run wrote %s", sig, out)
		}
		r = mustSucceed(t, args...)
		want, _ := wordcountWant(content)
		if got := readFile(t, out); got != want {
			t.Errorf("%v: the resumed run's output differs from the reference\n%s", sig, firstDiff(got, want))
		}
	}
}

// Without checkpoints a signal stops the job at once, and it says what it
// did not write; a second signal ends a clean stop that waits.
func TestStopWithoutCheckpointsAndTwice(t *testing.T) {
	dir := t.TempDir()
	text, _ := stopText(t, dir)
	out := filepath.Join(dir, "out.csv")
	r, took := signalled(t, []string{"run", "wordcount", "--input", text, "--out", out, "--rate", "5000"}, time.Second, syscall.SIGTERM, 0)
	if r.code == 0 || !strings.Contains(r.stderr, "not written") || took > 5*time.Second {
		t.Errorf("without checkpoints: exit %d after %v; want a failure saying what was not written, at once\nstderr: %s", r.code, took, r.stderr)
	}
	// Checkpoints every 1000 epochs of 1 s: a clean stop would wait long.
	r, took = signalled(t, []string{"run", "wordcount", "--input", text, "--out", out, "--rate", "5000",
		"--checkpoint-dir", filepath.Join(dir, "ckpt"), "--checkpoint-every", "1000"}, time.Second, syscall.SIGINT, 300*time.Millisecond)
	if r.code == 0 || took > 5*time.Second {
		t.Errorf("a second Ctrl-C: exit %d after %v; want a failure at once\nstderr: %s", r.code, took, r.stderr)
	}
}

// SIGTERM to launch --restart stops every process cleanly and starts
// nothing again; the job then resumes from the final checkpoint and
// writes the failure-free output.
func TestStopLaunchRestart(t *testing.T) {
	dir := t.TempDir()
	text, content := stopText(t, dir)
	out := filepath.Join(dir, "out.csv")
	args := []string{"launch", "-n", "2", "--restart", "5", "--", "run", "wordcount", "--input", text, "--out", out,
		"--checkpoint-dir", filepath.Join(dir, "ckpt"), "--interval", "50ms", "--checkpoint-every", "2", "--rate", "10000", "--workers", "1"}
	r, took := signalled(t, args, 2*time.Second, syscall.SIGTERM, 0)
	if r.code != 0 || strings.Contains(r.stderr, "starting the job again (") || !strings.Contains(r.stderr, "stopped cleanly at checkpoint") {
		t.Fatalf("launch after SIGTERM: exit %d after %v; want 0, a clean stop and no restart\nstderr: %s", r.code, took, r.stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the stopped job wrote %s", out)
	}
	mustSucceed(t, args...)
	want, _ := wordcountWant(content)
	if got := readFile(t, out); got != want {
		t.Errorf("the resumed job's output differs from the reference\n%s", firstDiff(got, want))
	}
}
