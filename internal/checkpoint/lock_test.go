package checkpoint

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestLockHeld(t *testing.T) {
	dir := t.TempDir()
	l, err := Lock(dir, 0, "job wordcount (pid 1)")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(dir, 0, "job other")
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "job wordcount (pid 1)") {
		t.Fatalf("second lock: %v, want ErrLocked naming the holder", err)
	}
	l1, err := Lock(dir, 1, "job wordcount process 1")
	if err != nil {
		t.Fatalf("another process's lock: %v", err)
	}
	l1.Release()
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l, err = Lock(dir, 0, "job again")
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l.Release()
}

// A lock held by a process that was killed is free again.
func TestLockReleasedWhenHolderDies(t *testing.T) {
	if os.Getenv("WEIR_LOCK_CHILD") != "" {
		if _, err := Lock(os.Getenv("WEIR_LOCK_CHILD"), 0, "child"); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("locked\n")
		select {}
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=TestLockReleasedWhenHolderDies")
	cmd.Env = append(os.Environ(), "WEIR_LOCK_CHILD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("child: %q, %v", buf, err)
	}
	if _, err := Lock(dir, 0, "parent"); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "child") {
		t.Fatalf("while the child holds it: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := Lock(dir, 0, "parent")
	if err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
	l.Release()
}
