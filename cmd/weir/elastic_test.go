package main

import (
	"slices"

	"context"
	"github.com/weirstream/weir/internal/cluster"
	"github.com/weirstream/weir/internal/dataflow"
	"os"
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

// weir launch -n 2 --slots 3 --join-after starts an elastic word count
// on two processes and a third that joins it while it runs: process 0
// lets it in, it takes key groups and input shares, and the output
// equals the reference count.
func TestElasticJoinUnderLaunch(t *testing.T) {
	dir := t.TempDir()
	text := rescaleText(24_000)
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.csv")
	writeFile(t, in, text)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, weirBin, "launch", "-n", "2", "--slots", "3", "--join-after", "2s", "--",
		"run", "wordcount", "--input", in, "--out", out, "--rate", "3000", "--workers", "2", "--interval", "100ms")
	errb := &lockedWriter{b: &strings.Builder{}}
	cmd.Stderr = errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("the job: %v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "a process joins the job") {
		t.Errorf("process 0 did not say a process joins:\n%s", errb.String())
	}
	if !strings.Contains(errb.String(), "process 2 pid") {
		t.Errorf("launch did not start process 2:\n%s", errb.String())
	}
	if got, want := readFile(t, out), wordcountCSV(text); got != want {
		t.Errorf("the output differs from the reference after process 2 joined\n%s", firstDiff(got, want))
	}
}

// A joining process names a running job it can join: --join without
// --members, and process 0 (which starts the job), are refused.
func TestJoinRefusedFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--process", "2", "--peers", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3", "--join", "127.0.0.1:1"}, "ElasticCluster too"},
		{[]string{"--process", "0", "--peers", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3", "--members", "2", "--join", "127.0.0.1:2"}, "cannot join it"},
		{[]string{"--process", "0", "--peers", "127.0.0.1:1,127.0.0.1:2", "--members", "3"}, "more members than"},
	} {
		dir := t.TempDir()
		in := filepath.Join(dir, "in.txt")
		writeFile(t, in, "a b c\n")
		cmd := exec.Command(weirBin, append([]string{"run", "wordcount", "--input", in, "--out", filepath.Join(dir, "out.csv")}, c.args...)...)
		cmd.Env = append(os.Environ(), "WEIR_SECRET=s")
		b, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(b), c.want) {
			t.Errorf("weir run wordcount %v: %v\n%s\nwant an error saying %q", c.args, err, b, c.want)
		}
	}
}

// A process of a slot past the members without --join (a new pod of a
// scaled StatefulSet, started with its siblings' arguments) joins
// through the first of the others that lets it in, process 0 first (it
// may have left); a member does not join.
func TestJoinDefaultsToTheOthers(t *testing.T) {
	peers := []string{"web-0.weir:7070", "web-1.weir:7070", "web-2.weir:7070", "web-3.weir:7070"}
	for self, want := range map[int][]string{0: nil, 1: nil, 2: {peers[0], peers[1], peers[3]}, 3: peers[:3]} {
		f := clusterFlags{members: 2, resolved: cluster.Cluster{Self: self, Peers: peers, From: "kubernetes"}}
		var cfg dataflow.JobConfig
		for _, o := range f.options() {
			o(&cfg)
		}
		if cfg.Cluster == nil || cfg.Cluster.Members != 2 || !slices.Equal(cfg.Cluster.Join, want) || cfg.Cluster.Joining() != (want != nil) {
			t.Errorf("process %d: cluster %+v; want members 2, join %v", self, cfg.Cluster, want)
		}
	}
}
