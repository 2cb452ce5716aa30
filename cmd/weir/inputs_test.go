package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/jobs/wordcount"
)

// wordcountWant is the output of word count over the texts, and the
// summary's count of non-empty lines.
func wordcountWant(texts ...string) (string, int) {
	var lines []string
	n := 0
	for _, s := range texts {
		for _, l := range strings.Split(s, "\n") {
			l = strings.TrimSuffix(l, "\r")
			lines = append(lines, l)
			if l != "" {
				n++
			}
		}
	}
	var b strings.Builder
	b.WriteString("word,count\n")
	for _, r := range wordcount.Reference(lines) {
		fmt.Fprintf(&b, "%s,%d\n", csvField(r.Key), r.Value)
	}
	return b.String(), n
}

// checkWordcount checks the output file and the summary's line count.
func checkWordcount(t *testing.T, r result, out string, texts ...string) {
	t.Helper()
	want, lines := wordcountWant(texts...)
	if got := readFile(t, out); got != want {
		t.Errorf("output differs from the reference\n%s", firstDiff(got, want))
	}
	if s := fmt.Sprintf("wordcount: %d non-empty lines, ", lines); !strings.HasPrefix(r.stderr, s) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stderr %q; want one summary line starting %q", r.stderr, s)
	}
}

// --input takes directories (every file under them, hidden ones too),
// patterns Weir expands itself, @LIST files and - for standard input.
func TestWordcountInputs(t *testing.T) {
	dir := t.TempDir()
	texts := map[string]string{
		"a.txt":            "the quick brown fox\n\njumps over\n",
		"b.txt":            "the lazy dog\r\nthe end",
		"sub/c.txt":        "deep down\n",
		"sub/.hidden":      "hidden words count too\n",
		"sub/deeper/d.log": "the the the\n",
	}
	for name, s := range texts {
		p := filepath.Join(dir, "in", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, s)
	}
	in := filepath.Join(dir, "in")
	all := []string{texts["a.txt"], texts["b.txt"], texts["sub/c.txt"], texts["sub/.hidden"], texts["sub/deeper/d.log"]}
	list := filepath.Join(dir, "list.txt")
	writeFile(t, list, filepath.Join(in, "a.txt")+"\n\n"+filepath.Join(in, "sub")+"\r\n")
	out := filepath.Join(dir, "out.csv")
	for _, c := range []struct {
		name  string
		args  []string
		texts []string
	}{
		{"directory", []string{"--input", in}, all},
		{"pattern", []string{"--input", filepath.Join(in, "*.txt")}, all[:2]},
		{"pattern-of-directories", []string{"--input", filepath.Join(in, "s*")}, all[2:]},
		{"list", []string{"--input", "@" + list}, []string{texts["a.txt"], texts["sub/c.txt"], texts["sub/.hidden"], texts["sub/deeper/d.log"]}},
		{"file-and-directory", []string{"--input", filepath.Join(in, "a.txt"), "--input", filepath.Join(in, "sub", "deeper")}, []string{texts["a.txt"], texts["sub/deeper/d.log"]}},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(out)
			r := mustSucceed(t, append([]string{"run", "wordcount", "--out", out, "--workers", "2"}, c.args...)...)
			checkWordcount(t, r, out, c.texts...)
		})
	}

	t.Run("stdin", func(t *testing.T) {
		os.Remove(out)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, weirBin, "run", "wordcount", "--input", "-", "--out", out, "--workers", "2")
		cmd.Stdin = strings.NewReader(strings.Join(all, "\n"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("weir run wordcount --input -: %v\n%s", err, stderr.String())
		}
		checkWordcount(t, result{stderr: stderr.String()}, out, strings.Join(all, "\n"))
	})

	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "special", "fifo")
	os.MkdirAll(filepath.Dir(fifo), 0o755)
	if err := exec.Command("mkfifo", fifo).Run(); err != nil {
		fifo = ""
	}
	linkDir := filepath.Join(dir, "linkdir")
	os.MkdirAll(linkDir, 0o755)
	if err := os.Symlink(filepath.Join(in, "sub"), filepath.Join(linkDir, "sub")); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(dir, "ckpt")
	peers := []string{"--process", "0", "--peers", "127.0.0.1:1,127.0.0.1:2", "--secret", "s"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"empty-directory", []string{"--input", empty}, "--input " + empty + ": the directory holds no file"},
		{"no-match", []string{"--input", filepath.Join(in, "*.csv")}, "--input " + filepath.Join(in, "*.csv") + ": matches no file"},
		{"bad-pattern", []string{"--input", filepath.Join(in, "[")}, "--input " + filepath.Join(in, "[") + ": syntax error in pattern"},
		{"missing-list", []string{"--input", "@" + filepath.Join(dir, "nope.txt")}, "--input @" + filepath.Join(dir, "nope.txt")},
		{"given-twice", []string{"--input", in, "--input", filepath.Join(in, "a.txt")}, "--input " + filepath.Join(in, "a.txt") + ": given twice"},
		{"link-to-directory", []string{"--input", linkDir}, "is a symbolic link to a directory"},
		{"stdin-and-file", []string{"--input", "-", "--input", filepath.Join(in, "a.txt")}, "--input -: standard input is read alone"},
		{"stdin-checkpoints", []string{"--input", "-", "--checkpoint-dir", ckpt}, "--input -: standard input cannot be read again after a restart"},
		{"stdin-from-checkpoint", []string{"--input", "-", "--from-checkpoint", filepath.Join(ckpt, "chk-1")}, "--input -: standard input cannot be read again"},
		{"stdin-distributed", append([]string{"--input", "-"}, peers...), "--input -: standard input is read by one process, and this job has 2"},
	}
	if fifo != "" {
		cases = append(cases, struct {
			name string
			args []string
			want string
		}{"special-file", []string{"--input", filepath.Dir(fifo)}, fifo + " is not a regular file"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "wordcount", "--out", out}, c.args...)
			os.Remove(out)
			if c.name == "stdin-distributed" {
				r := runWeir(t, args...)
				if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); r.code == 0 || !strings.HasPrefix(lines[len(lines)-1], "weir: "+c.want) {
					t.Errorf("exit %d, stderr %q; want a last line %q", r.code, r.stderr, "weir: "+c.want)
				}
				return
			}
			refused(t, args, []string{out, ckpt}, c.want)
		})
	}
}

// Pebble's log lines go through Weir's logger, which does not show them:
// a run with Pebble state prints its summary alone.
func TestPebbleQuiet(t *testing.T) {
	dir := t.TempDir()
	text, out := filepath.Join(dir, "text.txt"), filepath.Join(dir, "out.csv")
	writeFile(t, text, "one two two\nthree three three\n")
	r := mustSucceed(t, "run", "wordcount", "--input", text, "--out", out, "--state", "pebble", "--state-dir", filepath.Join(dir, "state"), "--workers", "2")
	checkWordcount(t, r, out, "one two two\nthree three three\n")
}

// A run restored from a checkpoint counts the lines read before the
// checkpoint too, and says where it resumed.
func TestSummaryAfterRestore(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 6_000 {
		fmt.Fprintf(&b, "w%d w%d\n", i%13, i%7)
	}
	text, ckpt := filepath.Join(dir, "text.txt"), filepath.Join(dir, "ckpt")
	writeFile(t, text, b.String())
	args := func(out string) []string {
		return []string{"run", "wordcount", "--input", text, "--out", out, "--checkpoint-dir", ckpt,
			"--interval", "50ms", "--checkpoint-every", "1", "--rate", "20000", "--workers", "1"}
	}
	first := filepath.Join(dir, "first.csv")
	checkWordcount(t, mustSucceed(t, args(first)...), first, b.String())
	// The second run starts, deliberately, from the first one's last
	// checkpoint (the first ran to its end: its directory is not
	// resumed by itself).
	chks, _ := filepath.Glob(filepath.Join(ckpt, "chk-*", "MANIFEST"))
	if len(chks) == 0 {
		t.Fatal("the first run left no complete checkpoint")
	}
	second := filepath.Join(dir, "second.csv")
	r := mustSucceed(t, append(args(second), "--from-checkpoint", filepath.Dir(chks[len(chks)-1]))...)
	if got, want := readFile(t, second), readFile(t, first); got != want {
		t.Errorf("the restored run's output differs\n%s", firstDiff(got, want))
	}
	summary := r.stderr[strings.Index(r.stderr, "wordcount: "):]
	t.Log(summary)
	var n, chk int
	if _, err := fmt.Sscanf(summary, "wordcount: %d non-empty lines (resumed from checkpoint %d),", &n, &chk); err != nil || n != 6_000 || chk < 1 {
		t.Errorf("summary %q; want all 6000 lines, resumed from a checkpoint", summary)
	}
}
