package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/jobs/wordcount"
)

// A YSB file job over 3 processes writes exactly the single-process (and
// reference) output, written by process 0 alone.
func TestLaunchYSBFile(t *testing.T) {
	dir := t.TempDir()
	evs, camp := ysbInput(30_000, 9, 36_000)
	events, campaigns := filepath.Join(dir, "events.jsonl"), filepath.Join(dir, "campaigns.csv")
	writeLines(t, events, jsonLines(evs))
	writeCampaigns(t, campaigns, camp)
	want := ysbCSV(t, evs, camp)
	out := filepath.Join(dir, "out.csv")
	r := mustSucceed(t, "launch", "-n", "3", "--", "run", "ysb", "--events", events, "--campaigns", campaigns, "--out", out, "--workers", "1", "--epoch-records", "700")
	if got := readFile(t, out); got != want {
		t.Errorf("output differs from the reference: %d bytes, want %d\n%s", len(got), len(want), firstDiff(got, want))
	}
	for i := range 3 {
		if !strings.Contains(r.stderr, fmt.Sprintf("[%d] weir: process %d of 3", i, i)) {
			t.Errorf("stderr does not show process %d starting:\n%s", i, r.stderr)
		}
	}
	if !strings.Contains(r.stderr, "[0] ysb: ") {
		t.Errorf("process 0 wrote no summary:\n%s", r.stderr)
	}
}

// Word count over 3 processes equals the reference.
func TestLaunchWordcount(t *testing.T) {
	dir := t.TempDir()
	var text strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&text, "w%d x%d the\n", i%997, i%13)
	}
	in := filepath.Join(dir, "in.txt")
	writeFile(t, in, text.String())
	want := wordcountCSV(text.String())
	out := filepath.Join(dir, "words.csv")
	mustSucceed(t, "launch", "-n", "3", "--", "run", "wordcount", "--input", in, "--out", out, "--workers", "1")
	if got := readFile(t, out); got != want {
		t.Errorf("output differs from the reference\n%s", firstDiff(got, want))
	}
}

// wordcountCSV is the expected output of word count over text.
func wordcountCSV(text string) string {
	var want strings.Builder
	want.WriteString("word,count\n")
	for _, res := range wordcount.Reference(strings.Split(text, "\n")) {
		fmt.Fprintf(&want, "%s,%d\n", csvField(res.Key), res.Value)
	}
	return want.String()
}

// bench ysb over 2 processes prints one JSON summary for the whole job.
func TestLaunchBenchYSB(t *testing.T) {
	r := mustSucceed(t, "launch", "-n", "2", "--", "bench", "ysb", "--events", "300000", "--workers", "1")
	var got map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("stdout %q: want one JSON object (%v)", r.stdout, err)
	}
	if got["processes"] != 2.0 || got["events"] != 300000.0 || got["checked"] != true || got["events_per_s"].(float64) <= 0 {
		t.Errorf("summary %v", got)
	}
	if got["wire_bytes_per_event"] == nil {
		t.Errorf("summary has no wire_bytes_per_event: %v", got)
	}
}

// bench skew over 2 and 3 processes runs every strategy and auto and
// checks their output on process 0, which alone prints the summary.
func TestLaunchBenchSkew(t *testing.T) {
	for _, n := range []string{"2", "3"} {
		r := mustSucceed(t, "launch", "-n", n, "--", "bench", "skew", "--events", "200000", "--keys", "5000", "--workers", "1",
			"--event-rate", "50000", "--partitioning", "all")
		var got map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || strings.Count(r.stdout, "\n") != 1 {
			t.Fatalf("%s processes: stdout %q: want one JSON object (%v)", n, r.stdout, err)
		}
		per, _ := got["strategies"].(map[string]any)
		if fmt.Sprint(got["processes"]) != n || got["checked"] != true || len(per) != 5 {
			t.Errorf("%s processes: summary %v", n, got)
		}
	}
}

// peersFor returns n free loopback addresses.
func peersFor(t *testing.T, n int) []string {
	var addrs []string
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		addrs = append(addrs, l.Addr().String())
	}
	for _, l := range ls {
		l.Close()
	}
	return addrs
}

// startProcess starts process i of a job by hand.
func startProcess(t *testing.T, ctx context.Context, i int, peers []string, secret string, args ...string) (*exec.Cmd, *strings.Builder) {
	cmd := exec.CommandContext(ctx, weirBin, append(args, "--process", strconv.Itoa(i), "--peers", strings.Join(peers, ","))...)
	cmd.Env = append(os.Environ(), "WEIR_SECRET="+secret)
	var errb strings.Builder
	cmd.Stderr = &lockedWriter{b: &errb}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &errb
}

// A peer killed mid-run fails the job on every other process within a few
// seconds, with an error that names the peer.
func TestKilledPeer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	peers := peersFor(t, 3)
	args := []string{"run", "ysb", "--events", "10000000000", "--rate", "200000", "--workers", "1"}
	var cmds []*exec.Cmd
	var errs []*strings.Builder
	for i := range 3 {
		c, e := startProcess(t, ctx, i, peers, "s3cret", args...)
		cmds, errs = append(cmds, c), append(errs, e)
	}
	time.Sleep(3 * time.Second) // connected and running
	if err := cmds[2].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmds[2].Wait()
	killed := time.Now()
	for i := range 2 {
		err := cmds[i].Wait()
		took := time.Since(killed)
		if err == nil {
			t.Errorf("process %d: exit 0 after its peer was killed", i)
		}
		if took > 15*time.Second {
			t.Errorf("process %d took %v to fail", i, took)
		}
		if !strings.Contains(errs[i].String(), "peer 2") {
			t.Errorf("process %d: stderr does not name peer 2:\n%s", i, errs[i].String())
		}
	}
}

// lockedWriter lets a test read what a running process has written.
type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// bench transport measures process 0 sending to process 1.
func TestLaunchBenchTransport(t *testing.T) {
	r := mustSucceed(t, "launch", "-n", "2", "--", "bench", "transport", "--records", "200000", "--batch", "500")
	var got map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("stdout %q: %v", r.stdout, err)
	}
	if got["records"] != 200000.0 || got["records_per_s"].(float64) <= 0 || got["bytes_per_record"].(float64) < 24 {
		t.Errorf("summary %v", got)
	}
	mustFail(t, []string{"bench", "transport"}, "runs as 2 processes")
}
