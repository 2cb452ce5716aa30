package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refused runs weir with args and checks that it fails before doing any
// work: a one-line error with one "weir: " prefix holding each of want, and
// none of the paths in made created.
func refused(t *testing.T, args []string, made []string, want ...string) {
	t.Helper()
	r := mustFail(t, args, want...)
	if n := strings.Count(r.stderr, "weir:"); n != 1 {
		t.Errorf("weir %s: %d \"weir:\" prefixes in %q; want 1", strings.Join(args, " "), n, r.stderr)
	}
	for _, p := range made {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("weir %s: %s exists after the refusal (%v)", strings.Join(args, " "), p, err)
			os.RemoveAll(p)
		}
	}
}

// Every setting that cannot work is refused at start, naming the flag and
// its value. Each run would write --out (and checkpoints) if it ran, so a
// setting let through shows as a file.
func TestRefusedSettings(t *testing.T) {
	dir := t.TempDir()
	out, ckpt, state := filepath.Join(dir, "out.csv"), filepath.Join(dir, "ckpt"), filepath.Join(dir, "state")
	text := filepath.Join(dir, "text.txt")
	writeFile(t, text, "hello world\n")
	gen := []string{"run", "ysb", "--events", "2000", "--rate", "0", "--out", out}
	wc := []string{"run", "wordcount", "--input", text, "--out", out}
	with := func(base []string, more ...string) []string { return append(append([]string(nil), base...), more...) }
	cases := []struct {
		args []string
		want []string
	}{
		{with(gen, "--workers", "0"), []string{"--workers 0: must be at least 1"}},
		{with(gen, "--workers", "-1"), []string{"--workers -1: must be at least 1"}},
		{with(gen, "--workers", "100000"), []string{"--workers 100000 exceeds the 128 key groups: a keyed operator can have at most one instance per key group"}},
		{with(gen, "--workers", "9", "--key-groups", "8"), []string{"--workers 9 exceeds the 8 key groups"}},
		{with(gen, "--interval", "0", "--checkpoint-dir", ckpt, "--checkpoint-interval", "1s"), []string{"--interval 0s: must be positive"}},
		{with(gen, "--interval", "-1s"), []string{"--interval -1s: must be positive"}},
		{with(gen, "--rate", "-5"), []string{"--rate -5: must be a finite number, at least 0"}},
		{with(gen, "--rate", "NaN"), []string{"--rate NaN: must be a finite number"}},
		{with(gen, "--rate", "Inf"), []string{"--rate +Inf: must be a finite number"}},
		{with(wc, "--rate", "-Inf"), []string{"--rate -Inf: must be a finite number"}},
		{with(gen, "--state", "bogus"), []string{"--state bogus: want memory or pebble"}},
		{with(gen, "--state", "pebble", "--state-dir", ""), []string{`--state-dir "": --state pebble needs a directory`}},
		{with(gen, "--key-groups", "-5"), []string{"--key-groups -5: must be from 1 to 32768"}},
		{with(gen, "--key-groups", "40000"), []string{"--key-groups 40000: must be from 1 to 32768"}},
		{with(gen, "--checkpoint-dir", ckpt, "--checkpoint-keep", "0"), []string{"--checkpoint-keep 0: must be at least 1"}},
		{with(gen, "--checkpoint-dir", ckpt, "--checkpoint-every", "-1"), []string{"--checkpoint-every -1: must be at least 1 epoch"}},
		{with(gen, "--checkpoint-dir", ckpt, "--checkpoint-every", "0"), []string{"--checkpoint-every 0: must be at least 1 epoch"}},
		{with(gen, "--checkpoint-dir", ckpt, "--checkpoint-interval", "-1s"), []string{"--checkpoint-interval -1s: must be at least --interval (1s)"}},
		{with(gen, "--checkpoint-dir", ckpt, "--checkpoint-interval", "10ms", "--interval", "20ms"), []string{"--checkpoint-interval 10ms: must be at least --interval (20ms)"}},
		{with(gen, "--checkpoint-dir", ckpt, "--checkpoint-interval", "1s", "--epoch-records", "100"), []string{"--checkpoint-interval 1s: epochs are cut by --epoch-records", "--checkpoint-every"}},
		{with(gen, "--checkpoint-dir", ckpt, "--checkpoint-interval", "1s", "--checkpoint-every", "3"), []string{"--checkpoint-interval 1s: give it or --checkpoint-every, not both"}},
		{with(gen, "--checkpoint-every", "5"), []string{"--checkpoint-every 5: needs --checkpoint-dir"}},
		{with(gen, "--epoch-records", "-1"), []string{"--epoch-records -1: must not be negative"}},
		{with(gen, "--duration", "-1s"), []string{"--duration -1s: must not be negative"}},
		{with(gen, "--max-delay", "-1s"), []string{"--max-delay -1s: must not be negative"}},
		{with(gen, "--events", "1.5"), []string{"--events 1.5: not a whole number of events"}},
		{with(gen, "--events", "2.5e-1"), []string{"--events 2.5e-1: not a whole number of events"}},
		{with(gen, "--events", "-5"), []string{"--events -5: a number of events must not be negative"}},
		{with(gen, "--events", "1e30"), []string{"--events 1e30: too many events"}},
		{with(gen, "--events", filepath.Join(dir, "nope.jsonl")), []string{"--events " + filepath.Join(dir, "nope.jsonl") + ": neither a number of events nor an existing file"}},
		{with(gen, "--events", dir), []string{"--events " + dir + ": not a regular file"}},
		{with(wc, "--rate", "NaN"), []string{"--rate NaN"}},
		{with(wc, "--workers", "0"), []string{"--workers 0"}},
		{[]string{"explain", "ysb", "--workers", "0"}, []string{"--workers 0: must be at least 1"}},
		{[]string{"bench", "ysb", "--events", "1000", "--key-groups", "0"}, []string{"--key-groups 0"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args[2:], " "), func(t *testing.T) {
			refused(t, c.args, []string{out, ckpt, state}, c.want...)
		})
	}
}

// --events N takes any written form of a whole number.
func TestEventsNumberForms(t *testing.T) {
	for in, want := range map[string]string{"1e3": "ysb: 1000 events", "1_000": "ysb: 1000 events", "1.5e3": "ysb: 1500 events", "0x3e8": "ysb: 1000 events"} {
		r := mustSucceed(t, "run", "ysb", "--events", in, "--rate", "0", "--workers", "1")
		if !strings.HasPrefix(r.stdout, want+" in ") {
			t.Errorf("--events %s: summary %q; want it to start %q", in, r.stdout, want)
		}
	}
}

// explain without a job names the jobs.
func TestExplainWithoutJob(t *testing.T) {
	mustFail(t, []string{"explain"}, "explain needs a job: ysb, wordcount or fission")
}

// An error of the engine reaches the command line with one "weir: ".
func TestOnePrefix(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text.txt")
	writeFile(t, text, "a b\n")
	out, ckpt := filepath.Join(dir, "out.csv"), filepath.Join(dir, "ckpt")
	refused(t, []string{"run", "wordcount", "--input", text, "--out", out, "--checkpoint-dir", ckpt, "--from-checkpoint", filepath.Join(ckpt, "chk-5")},
		[]string{out}, "weir: cannot start from checkpoint "+filepath.Join(ckpt, "chk-5")+": it is not a complete checkpoint")
}
