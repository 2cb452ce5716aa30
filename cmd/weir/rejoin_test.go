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

// elasticCount runs the processes of an elastic word count over TCP of
// two members and the given slots.
type elasticCount struct {
	t       *testing.T
	ctx     context.Context
	text    string
	in, out string
	peers   []string
	log0    func() string
	done0   chan error
}

// startElasticCount writes the input, reserves the slots' addresses and
// starts process 0 (3 minutes at most for the test).
func startElasticCount(t *testing.T, slots int) *elasticCount {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	dir := t.TempDir()
	e := &elasticCount{t: t, ctx: ctx, text: rescaleText(60_000), in: filepath.Join(dir, "in.txt"), out: filepath.Join(dir, "out.csv"),
		peers: loopbackAddrs(t, slots)}
	writeFile(t, e.in, e.text)
	e.start(0)
	return e
}

// start starts process p with extra arguments.
func (e *elasticCount) start(p int, extra ...string) (*exec.Cmd, func() string, chan error) {
	args := append([]string{"run", "wordcount", "--input", e.in, "--out", e.out, "--rate", "3000", "--workers", "2",
		"--interval", "100ms", "--elastic", "--members", "2", "--process", strconv.Itoa(p), "--peers", strings.Join(e.peers, ",")}, extra...)
	cmd := exec.CommandContext(e.ctx, weirBin, args...)
	cmd.Env = append(os.Environ(), "WEIR_SECRET=rejoin")
	errb := &lockedWriter{b: &strings.Builder{}}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if p == 0 {
		e.log0, e.done0 = errb.String, done
	}
	return cmd, errb.String, done
}

// until waits for process 0 to have logged want n times.
func (e *elasticCount) until(want string, n int) {
	e.t.Helper()
	for strings.Count(e.log0(), want) < n {
		select {
		case err := <-e.done0:
			e.t.Fatalf("process 0 ended (%v) before it logged %q %d times\n%s", err, want, n, e.log0())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// leave sends SIGTERM to cmd and waits for it to leave and exit 0.
func (e *elasticCount) leave(cmd *exec.Cmd, log func() string, done chan error) {
	e.t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		e.t.Fatal(err)
	}
	if err := <-done; err != nil {
		e.t.Fatalf("the leaving process: %v\n%s", err, log())
	}
	if !strings.Contains(log(), "this process leaves the job") {
		e.t.Errorf("the leaving process did not say it leaves:\n%s", log())
	}
}

// An elastic word count of two members over TCP: a process of slot 2
// joins it (through process 0, by default), leaves on SIGTERM, and a new
// process of slot 2, started with the same arguments, takes the slot
// again; the job ends, and the output equals the reference count.
func TestElasticRejoinAfterSIGTERM(t *testing.T) {
	e := startElasticCount(t, 3)
	_, _, done1 := e.start(1)
	third, log2, done2 := e.start(2)
	// Once process 0 let it in, it is told to leave: it does once its
	// input shares and key groups have moved to it (the join's steps).
	e.until("a process joins the job", 1)
	e.leave(third, log2, done2)
	_, log2b, done2b := e.start(2)
	e.until("a process joins the job", 2)
	e.finish("slot 2", log2b, done1, done2b)
}

// finish waits for process 0 and the processes of dones to exit 0, and
// compares the output with the reference count of the input.
func (e *elasticCount) finish(slot string, last func() string, dones ...chan error) {
	e.t.Helper()
	for p, done := range append([]chan error{e.done0}, dones...) {
		if err := <-done; err != nil {
			e.t.Fatalf("process #%d waited for (#0: process 0): %v\n%s\n%s", p, err, e.log0(), last())
		}
	}
	if got, want := readFile(e.t, e.out), wordcountCSV(e.text); got != want {
		e.t.Errorf("the output differs from the reference after %s was taken again\n%s", slot, firstDiff(got, want))
	}
}

// A member's slot (1 of a job of two members) is taken again: its process
// leaves on SIGTERM, and a new one started with the same arguments (a pod
// of a StatefulSet scaled down below the members, then up) finds the job
// running and takes the slot; the output equals the reference count.
func TestElasticMemberRejoin(t *testing.T) {
	e := startElasticCount(t, 2)
	second, log1, done1 := e.start(1)
	time.Sleep(3 * time.Second) // the job runs (a SIGTERM before would stop it)
	e.leave(second, log1, done1)
	_, log1b, done1b := e.start(1)
	e.until("a process joins the job", 1)
	e.finish("slot 1", log1b, done1b)
	if !strings.Contains(log1b(), "the job runs already") {
		t.Errorf("the new process of slot 1 did not say it found the job running:\n%s", log1b())
	}
}
