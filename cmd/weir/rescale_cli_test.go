package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// rescaleText is the input of the rescale tests: lines of words over
// many keys, so that every key group has some.
func rescaleText(lines int) string {
	var b strings.Builder
	for i := range lines {
		fmt.Fprintf(&b, "w%d x%d the\n", i%1999, i%17)
	}
	return b.String()
}

// startWeir starts the binary with args in the background; wait waits
// for it to end and returns its error and stderr.
func startWeir(t *testing.T, args ...string) (wait func() (error, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, weirBin, args...)
	errb := &lockedWriter{b: &strings.Builder{}}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); cancel() }()
	var err error
	ended := false
	wait = func() (error, string) {
		if !ended {
			err, ended = <-done, true
		}
		return err, errb.String()
	}
	t.Cleanup(func() { cancel(); wait() })
	return wait
}

// jobStats gets a running job's figures from its --metrics server's
// /metrics.json; ok is false while nothing answers.
func jobStats(t *testing.T, addr string) (st weir.JobStats, ok bool) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics.json")
	if err != nil {
		return st, false
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s/metrics.json: %s: %v", addr, resp.Status, err)
	}
	return st, true
}

// keyedOwners is the most instances of one keyed chain that own key
// groups, and the records the job read, as st says.
func keyedOwners(st weir.JobStats) (owners int, records int64) {
	by := map[string]map[int]bool{}
	for _, p := range st.Processes {
		records += p.Records
		for _, in := range p.Instances {
			if len(in.KeyGroups) > 0 {
				if by[in.Operator] == nil {
					by[in.Operator] = map[int]bool{}
				}
				by[in.Operator][in.Instance] = true
			}
		}
	}
	for _, m := range by {
		owners = max(owners, len(m))
	}
	return owners, records
}

// waitOwners polls addr's figures until cond holds of them (a minute at
// most), failing the test if the job ends first.
func waitOwners(t *testing.T, addr, what string, cond func(owners int, records int64) bool) {
	t.Helper()
	var o int
	var r int64
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		st, ok := jobStats(t, addr)
		if ok {
			if o, r = keyedOwners(st); cond(o, r) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %d instances own key groups, %d records read", what, o, r)
		}
	}
}

var announced = regexp.MustCompile(`^rescale to (\d+) instances \((\S+)\) announced: (\d+) key groups move in (\d+) steps?, at epochs (\d+) to (\d+)\n(source \S+: its shares move at epoch \d+\n)*$`)

// moves counts the key groups whose owner differs between the contiguous
// ranges of 128 key groups over from and over to instances (as
// partition.Contiguous splits them, 128 being a multiple of both).
func moves(from, to int) int {
	n := 0
	for kg := range 128 {
		if kg*from/128 != kg*to/128 {
			n++
		}
	}
	return n
}

// A word count started with --active-instances 2 of --workers 4 and
// --metrics is rescaled to 4 by weir rescale while it runs: the job
// first has 2 instances owning key groups, the command prints the
// migration announced (the key groups that change owner, counted
// plainly), the job's figures come to show 4 owners, and its output is
// the reference count's and a run's without rescale. Asking for more
// instances than the job has is refused with the job's reason, and
// asking after the job ended says nothing answers.
func TestRescaleCommand(t *testing.T) {
	dir := t.TempDir()
	text := rescaleText(24_000)
	in, out, plain := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.csv"), filepath.Join(dir, "plain.csv")
	writeFile(t, in, text)
	addr := "127.0.0.1:" + strconv.Itoa(freePorts(t))
	wait := startWeir(t, "run", "wordcount", "--input", in, "--out", out, "--rate", "4000", "--workers", "4",
		"--active-instances", "2", "--interval", "100ms", "--metrics", addr)
	waitOwners(t, addr, "the job to read with 2 instances owning key groups", func(o int, r int64) bool { return o == 2 && r > 0 })
	mustFail(t, []string{"rescale", "--to", "5", addr}, "rescale "+addr, "the job refuses", "run 4 instances")
	r := mustSucceed(t, "rescale", "--to", "4", "--strategy", "all-at-once", addr)
	m := announced.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("weir rescale printed %q", r.stdout)
	}
	if m[1] != "4" || m[2] != "all-at-once" || m[3] != strconv.Itoa(moves(2, 4)) || m[4] != "1" || m[5] != m[6] {
		t.Errorf("weir rescale printed %q; want %d key groups moving in 1 step", r.stdout, moves(2, 4))
	}
	waitOwners(t, addr, "4 instances to own key groups", func(o int, _ int64) bool { return o == 4 })
	if err, stderr := wait(); err != nil {
		t.Fatalf("the job: %v\n%s", err, stderr)
	}
	mustFail(t, []string{"rescale", "--to", "4", addr}, "rescale "+addr, "nothing answers there")
	mustSucceed(t, "run", "wordcount", "--input", in, "--out", plain, "--workers", "4")
	got, want := readFile(t, out), wordcountCSV(text)
	if got != want {
		t.Errorf("the rescaled job's output differs from the reference\n%s", firstDiff(got, want))
	}
	if p := readFile(t, plain); got != p {
		t.Errorf("the rescaled job's output differs from a run's without rescale\n%s", firstDiff(got, p))
	}
}

// Under weir launch, process 1's --ui server (port+1) is asked to spread
// a job whose keyed operators start on process 0's first instance over
// all 4 (2 workers x 2 processes), in batched steps: process 0's figures
// come to show 4 owners, and the output is the reference count's.
func TestRescaleCommandLaunch(t *testing.T) {
	dir := t.TempDir()
	text := rescaleText(40_000)
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.csv")
	writeFile(t, in, text)
	mp, up := freePorts(t), freePorts(t)
	for up >= mp-1 && up <= mp+1 { // two pairs, apart
		up = freePorts(t)
	}
	metrics := "127.0.0.1:" + strconv.Itoa(mp)
	wait := startWeir(t, "launch", "-n", "2", "--", "run", "wordcount", "--input", in, "--out", out, "--rate", "3000",
		"--workers", "2", "--active-instances", "1", "--interval", "200ms", "--metrics", metrics, "--ui", "127.0.0.1:"+strconv.Itoa(up))
	waitOwners(t, metrics, "process 0 to read with 1 instance owning key groups", func(o int, r int64) bool { return o == 1 && r > 0 })
	// Process 1 serves its dashboard on port+1.
	r := mustSucceed(t, "rescale", "--to", "4", "--per-pair", "16", "127.0.0.1:"+strconv.Itoa(up+1))
	m := announced.FindStringSubmatch(r.stdout)
	if m == nil || m[3] != strconv.Itoa(moves(1, 4)) {
		t.Fatalf("weir rescale printed %q; want %d key groups moving", r.stdout, moves(1, 4))
	}
	waitOwners(t, metrics, "4 instances to own key groups", func(o int, _ int64) bool { return o == 4 })
	if err, stderr := wait(); err != nil {
		t.Fatalf("the job: %v\n%s", err, stderr)
	}
	if got, want := readFile(t, out), wordcountCSV(text); got != want {
		t.Errorf("the rescaled job's output differs from the reference\n%s", firstDiff(got, want))
	}
}

// --active-instances refuses values the job cannot start with.
func TestActiveInstancesRefused(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, in, "a b\n")
	out := filepath.Join(t.TempDir(), "out.csv")
	mustFail(t, []string{"run", "wordcount", "--input", in, "--out", out, "--workers", "2", "--active-instances", "0"}, "--active-instances 0", "from 1 to the 2 instances of --workers 2")
	mustFail(t, []string{"run", "wordcount", "--input", in, "--out", out, "--workers", "2", "--active-instances", "3"}, "--active-instances 3")
	mustFail(t, []string{"rescale", "--to", "0", "127.0.0.1:1"}, "--to 0")
	mustFail(t, []string{"rescale", "--to", "2", "--gap", "0", "127.0.0.1:1"}, "--gap 0")
	mustFail(t, []string{"rescale", "--to", "2", "--strategy", "gradual", "127.0.0.1:1"}, "--strategy gradual", "batched, all-at-once or fluid")
	mustFail(t, []string{"rescale", "127.0.0.1:1"}, "--to is required")
	mustFail(t, []string{"rescale", "--to", "2", "--leave", "1", "127.0.0.1:1"}, "--to and --leave together")
	mustFail(t, []string{"rescale", "--leave", "-1", "127.0.0.1:1"}, "--leave -1")
	mustFail(t, []string{"run", "wordcount", "--input", in, "--out", out, "--elastic"}, "--elastic", "runs in one process")
	for _, s := range []string{"prompt", "pkg"} {
		// (The process says which it is before the flags are checked.)
		r := runWeir(t, "run", "wordcount", "--input", in, "--out", out, "--peers", "127.0.0.1:1,127.0.0.1:2", "--process", "0", "--secret", "s",
			"--elastic", "--partitioning", s)
		if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); r.code == 0 ||
			!strings.HasPrefix(lines[len(lines)-1], "weir: --partitioning "+s+" does not run in an elastic job") {
			t.Errorf("--elastic --partitioning %s: exit %d, stderr %q; want the refusal", s, r.code, r.stderr)
		}
	}
}
