package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ipRun runs an ip(8) command for the network namespace test.
func ipRun(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// Two processes in two network namespaces joined by a veth pair, so the
// job's traffic crosses real interfaces: word count equals the reference.
// It needs root (CI runs as root); elsewhere it is skipped with a message.
func TestAcrossNetworkNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatalf("ip(8) not found: %v", err)
	}
	suffix := fmt.Sprint(os.Getpid() % 100000)
	a, b := "weira"+suffix, "weirb"+suffix
	va, vb := "wva"+suffix, "wvb"+suffix
	ipRun(t, "netns", "add", a)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", a).Run() })
	ipRun(t, "netns", "add", b)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", b).Run() })
	ipRun(t, "link", "add", va, "type", "veth", "peer", "name", vb)
	ipRun(t, "link", "set", va, "netns", a)
	ipRun(t, "link", "set", vb, "netns", b)
	ipRun(t, "-n", a, "addr", "add", "10.231.0.1/24", "dev", va)
	ipRun(t, "-n", b, "addr", "add", "10.231.0.2/24", "dev", vb)
	for _, ns := range [][2]string{{a, va}, {b, vb}} {
		ipRun(t, "-n", ns[0], "link", "set", ns[1], "up")
		ipRun(t, "-n", ns[0], "link", "set", "lo", "up")
	}

	dir := t.TempDir()
	var text strings.Builder
	for i := range 30_000 {
		fmt.Fprintf(&text, "n%d y%d the\n", i%1009, i%7)
	}
	in := filepath.Join(dir, "in.txt")
	writeFile(t, in, text.String())
	want := wordcountCSV(text.String())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := filepath.Join(dir, "words.csv")
	peers := "10.231.0.1:7070,10.231.0.2:7070"
	var cmds []*exec.Cmd
	var errs []*strings.Builder
	for i, ns := range []string{a, b} {
		cmd := exec.CommandContext(ctx, "ip", "netns", "exec", ns, weirBin, "run", "wordcount", "--input", in, "--out", out,
			"--workers", "2", "--process", fmt.Sprint(i), "--peers", peers)
		cmd.Env = append(os.Environ(), "WEIR_SECRET=netns")
		var e strings.Builder
		cmd.Stderr = &lockedWriter{b: &e}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, errs = append(cmds, cmd), append(errs, &e)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, errs[i].String())
		}
	}
	if got := readFile(t, out); got != want {
		t.Errorf("output differs from the reference\n%s", firstDiff(got, want))
	}
}
