package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// loopbackAddrs returns n loopback addresses whose ports are free now.
func loopbackAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		out = append(out, l.Addr().String())
	}
	return out
}

// An elastic word count of two members over TCP: a process of slot 2
// joins it (through process 0, by default), leaves on SIGTERM, and a new
// process of slot 2, started with the same arguments, takes the slot
// again; the job ends, and the output equals the reference count.
func TestElasticRejoinAfterSIGTERM(t *testing.T) {
	dir := t.TempDir()
	text := rescaleText(60_000)
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.csv")
	writeFile(t, in, text)
	peers := loopbackAddrs(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := func(p int) (*exec.Cmd, func() string, chan error) {
		cmd := exec.CommandContext(ctx, weirBin, "run", "wordcount", "--input", in, "--out", out, "--rate", "3000", "--workers", "2",
			"--interval", "100ms", "--elastic", "--members", "2", "--process", strconv.Itoa(p), "--peers", strings.Join(peers, ","))
		cmd.Env = append(os.Environ(), "WEIR_SECRET=rejoin")
		errb := &lockedWriter{b: &strings.Builder{}}
		cmd.Stderr = errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		return cmd, errb.String, done
	}
	_, log0, done0 := start(0)
	_, _, done1 := start(1)
	// until waits for process 0 to have logged want n times.
	until := func(want string, n int) {
		t.Helper()
		for strings.Count(log0(), want) < n {
			select {
			case err := <-done0:
				t.Fatalf("process 0 ended (%v) before it logged %q %d times\n%s", err, want, n, log0())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	third, log2, done2 := start(2)
	// Once process 0 let it in, it is told to leave: it does once its
	// input shares and key groups have moved to it (the join's steps).
	until("a process joins the job", 1)
	if err := third.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-done2; err != nil {
		t.Fatalf("the first process of slot 2: %v\n%s", err, log2())
	}
	if !strings.Contains(log2(), "this process leaves the job") {
		t.Errorf("the first process of slot 2 did not say it leaves:\n%s", log2())
	}
	_, log2b, done2b := start(2)
	until("a process joins the job", 2)
	for p, done := range []chan error{done0, done1, done2b} {
		if err := <-done; err != nil {
			t.Fatalf("process %d: %v\n%s\n%s", p, err, log0(), log2b())
		}
	}
	if got, want := readFile(t, out), wordcountCSV(text); got != want {
		t.Errorf("the output differs from the reference after slot 2 was taken again\n%s", firstDiff(got, want))
	}
}
