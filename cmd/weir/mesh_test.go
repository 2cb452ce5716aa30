package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runPair starts processes 0 and 1 of a job by hand, from the binaries
// bins, with the secrets and arguments given per process, and waits for
// both. It returns their standard errors and how long the slower took.
func runPair(t *testing.T, bins, secrets [2]string, args [2][]string) ([2]string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	peers := peersFor(t, 2)
	var cmds [2]*exec.Cmd
	var errs [2]*strings.Builder
	start := time.Now()
	for i := range 2 {
		saved := weirBin
		weirBin = bins[i]
		cmds[i], errs[i] = startProcess(t, ctx, i, peers, secrets[i], args[i]...)
		weirBin = saved
	}
	var stderr [2]string
	for i, cmd := range cmds {
		if err := cmd.Wait(); err == nil {
			t.Errorf("process %d: exit 0; want it refused", i)
		}
		stderr[i] = errs[i].String()
	}
	return stderr, time.Since(start)
}

// Processes that prove the secret but run with other options, or another
// binary, both exit at once (well before --mesh-timeout), each naming
// the first difference from its side.
func TestMismatchedProcesses(t *testing.T) {
	job := []string{"run", "ysb", "--events", "100000", "--mesh-timeout", "60s"}
	with := func(extra ...string) []string { return append(append([]string(nil), job...), extra...) }
	// Another binary: the same build with a few bytes appended, which
	// runs alike.
	other := filepath.Join(t.TempDir(), "weir-copy")
	copyFile(t, weirBin, other, 0o755)
	f, err := os.OpenFile(other, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("appended"))
	f.Close()
	tests := []struct {
		name  string
		bins  [2]string
		args  [2][]string
		wants [2]string
	}{
		{"workers", [2]string{weirBin, weirBin}, [2][]string{with("--workers", "1"), with("--workers", "2")},
			[2]string{"--workers is 1 here, 2 there", "--workers is 2 here, 1 there"}},
		{"key groups", [2]string{weirBin, weirBin}, [2][]string{with("--workers", "1"), with("--workers", "1", "--key-groups", "64")},
			[2]string{"--key-groups is 128 here, 64 there", "--key-groups is 64 here, 128 there"}},
		{"binary", [2]string{weirBin, other}, [2][]string{with("--workers", "1"), with("--workers", "1")},
			[2]string{"runs another job: binary is " + fileHash(t, weirBin) + " here, " + fileHash(t, other) + " there",
				"runs another job: binary is " + fileHash(t, other) + " here, " + fileHash(t, weirBin) + " there"}},
	}
	// The same files in another order: a different input.
	dir := t.TempDir()
	a, b, out := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt"), filepath.Join(dir, "out.csv")
	writeFile(t, a, "one two\n")
	writeFile(t, b, "three four five\n")
	wc := func(inputs string) []string {
		return []string{"run", "wordcount", "--input", inputs, "--out", out, "--workers", "1", "--mesh-timeout", "60s"}
	}
	tests = append(tests, struct {
		name  string
		bins  [2]string
		args  [2][]string
		wants [2]string
	}{"input order", [2]string{weirBin, weirBin}, [2][]string{wc(a + "," + b), wc(b + "," + a)},
		[2]string{"runs another job: source lines is", "runs another job: source lines is"}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stderr, took := runPair(t, tt.bins, [2]string{"same", "same"}, tt.args)
			if took > 20*time.Second {
				t.Errorf("the processes took %v to exit; want them to at once", took)
			}
			for i, want := range tt.wants {
				peer := []string{"peer 1 (", "peer 0 ("}[i]
				if !strings.Contains(stderr[i], peer) || !strings.Contains(stderr[i], want) {
					t.Errorf("process %d: stderr does not name %s…) and say %q:\n%s", i, peer, want, stderr[i])
				}
			}
		})
	}
}

// Processes with different secrets never prove them to each other: each
// logs the connections it drops, waits until --mesh-timeout, and fails
// saying why.
func TestWrongSecretProcesses(t *testing.T) {
	args := []string{"run", "ysb", "--events", "100000", "--workers", "1", "--mesh-timeout", "2s"}
	stderr, _ := runPair(t, [2]string{weirBin, weirBin}, [2]string{"one", "two"}, [2][]string{args, args})
	for i, want := range []string{"no handshake with process 1", "dropped a connection from 127.0.0.1:"} {
		if !strings.Contains(stderr[i], want) || !strings.Contains(stderr[i], "wrong secret") || !strings.Contains(stderr[i], "no mesh within 2s") {
			t.Errorf("process %d: stderr does not say %q, wrong secret and no mesh within 2s:\n%s", i, want, stderr[i])
		}
	}
}

// fileHash is the hex SHA-256 of a file.
func fileHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
