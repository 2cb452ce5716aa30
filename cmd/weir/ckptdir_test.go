package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A checkpoint directory written by one job is refused by another, with
// what differs and what to do; a finished job's directory is not resumed.
func TestCheckpointDirOfAnotherJobCLI(t *testing.T) {
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "ckpt")
	// run ysb on the generator, stopped by a kill after it took some
	// checkpoints.
	cmd := exec.Command(weirBin, "run", "ysb", "--duration", "1m", "--rate", "100000", "--workers", "1",
		"--interval", "100ms", "--checkpoint-dir", ckpt, "--checkpoint-every", "2")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m, _ := filepath.Glob(filepath.Join(ckpt, "chk-*", "MANIFEST")); len(m) > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	text := filepath.Join(dir, "text.txt")
	writeFile(t, text, "a b c\n")
	out := filepath.Join(dir, "out.csv")
	mustFail(t, []string{"run", "wordcount", "--input", text, "--out", out, "--checkpoint-dir", ckpt},
		"belongs to another job", "--from-checkpoint", "a new --checkpoint-dir")

	// A finished job's directory.
	done := filepath.Join(dir, "done")
	args := []string{"run", "wordcount", "--input", text, "--out", out, "--checkpoint-dir", done, "--checkpoint-every", "1", "--interval", "20ms"}
	mustSucceed(t, args...)
	r := mustFail(t, args, "ran to its end", "is not resumed")
	if strings.Contains(r.stderr, "restoring") {
		t.Errorf("the refused run restored a checkpoint: %s", r.stderr)
	}
}

// A --from-checkpoint that names no complete checkpoint fails without
// creating its directory.
func TestFromMissingCheckpoint(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text.txt")
	writeFile(t, text, "a b c\n")
	missing := filepath.Join(dir, "nothing")
	mustFail(t, []string{"run", "wordcount", "--input", text, "--out", filepath.Join(dir, "out.csv"),
		"--from-checkpoint", filepath.Join(missing, "chk-000000000005")}, "not a complete checkpoint")
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("the failed start created %s", missing)
	}
}
