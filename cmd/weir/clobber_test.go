package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// No output may be an input or another output, by name or through a
// link, and no output directory may hold one: each is refused before
// anything is opened, and the inputs are left as they were, byte for byte.
func TestOutputsNeverClobberInputs(t *testing.T) {
	dir := t.TempDir()
	evs, camp := ysbInput(20_000, 3, 20_000)
	events, campaigns := filepath.Join(dir, "events.jsonl"), filepath.Join(dir, "campaigns.csv")
	writeLines(t, events, append(jsonLines(evs), "not json"))
	writeCampaigns(t, campaigns, camp)
	text := filepath.Join(dir, "text.txt")
	writeFile(t, text, "to be or not to be\n")
	evLink, textLink, evHard := filepath.Join(dir, "ev-link"), filepath.Join(dir, "text-link"), filepath.Join(dir, "ev-hard")
	for _, err := range []error{os.Symlink(events, evLink), os.Symlink(text, textLink), os.Link(events, evHard)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	inputs := map[string]string{}
	for _, p := range []string{events, campaigns, text} {
		inputs[p] = readFile(t, p)
	}
	outDir := t.TempDir()
	out, dead := filepath.Join(outDir, "out.csv"), filepath.Join(outDir, "dead.jsonl")
	ysbFile := []string{"run", "ysb", "--events", events, "--campaigns", campaigns}
	with := func(base []string, more ...string) []string { return append(append([]string(nil), base...), more...) }
	// A process of a job of two: its own dead letters go to FILE.process-1,
	// process 0's to FILE.process-0.
	proc1 := []string{"--process", "1", "--peers", "127.0.0.1:1,127.0.0.1:2", "--secret", "s"}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"dead-letter=events", with(ysbFile, "--out", out, "--dead-letter", events), []string{"--dead-letter " + events + ": is the --events file; an output must not overwrite an input"}},
		{"dead-letter=symlink", with(ysbFile, "--out", out, "--dead-letter", evLink), []string{"--dead-letter " + evLink + ": is the --events file"}},
		{"dead-letter=hard-link", with(ysbFile, "--out", out, "--dead-letter", evHard), []string{"--dead-letter " + evHard + ": is the --events file"}},
		{"dead-letter=campaigns", with(ysbFile, "--out", out, "--dead-letter", campaigns), []string{"is the --campaigns file"}},
		{"out=events", with(ysbFile, "--out", events), []string{"--out " + events + ": is the --events file"}},
		{"out=dead-letter", with(ysbFile, "--out", dead, "--dead-letter", dead), []string{"--dead-letter " + dead + ": is also --out " + dead}},
		{"checkpoint-dir-holds-events", with(ysbFile, "--out", out, "--checkpoint-dir", dir), []string{"--checkpoint-dir " + dir + ": holds the --events file " + events}},
		{"checkpoint-dir-holds-out", with(ysbFile, "--out", out, "--checkpoint-dir", outDir), []string{"--checkpoint-dir " + outDir + ": holds the --out file " + out}},
		{"state-dir=checkpoint-dir", with(ysbFile, "--out", out, "--checkpoint-dir", filepath.Join(outDir, "c"), "--state", "pebble", "--state-dir", filepath.Join(outDir, "c", "s")), []string{"--state-dir " + filepath.Join(outDir, "c", "s") + ": overlaps --checkpoint-dir"}},
		{"out=input", []string{"run", "wordcount", "--input", text, "--out", text}, []string{"--out " + text + ": is the --input file"}},
		{"out=symlink-to-input", []string{"run", "wordcount", "--input", text, "--out", textLink}, []string{"--out " + textLink + ": is the --input file"}},
		{"state-dir-holds-input", []string{"run", "wordcount", "--input", text, "--out", out, "--state", "pebble", "--state-dir", dir}, []string{"--state-dir " + dir + ": holds the --input file"}},
		{"generator-out-in-checkpoint-dir", []string{"run", "ysb", "--events", "1000", "--out", filepath.Join(outDir, "c", "out.csv"), "--checkpoint-dir", filepath.Join(outDir, "c")}, []string{"holds the --out file"}},
	}
	// Process 1 of a job of two says so on stderr first, then refuses to
	// let process 0's dead letters overwrite --out.
	r := runWeir(t, with(append(ysbFile, proc1...), "--out", dead+".process-0", "--dead-letter", dead)...)
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); r.code == 0 ||
		lines[len(lines)-1] != "weir: --dead-letter "+dead+".process-0: is also --out "+dead+".process-0; two outputs must not share a file" {
		t.Errorf("process 1 with --dead-letter FILE and --out FILE.process-0: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			refused(t, c.args, []string{out, dead, dead + ".process-0", dead + ".process-1", filepath.Join(outDir, "c")}, c.want...)
			for p, want := range inputs {
				if got := readFile(t, p); got != want {
					t.Fatalf("%s changed: %d bytes, was %d", p, len(got), len(want))
				}
			}
		})
	}
}

// Outputs are checked writable at start: a run that cannot write its
// output fails at once, not after the work, and an existing output is
// left as it was until a run succeeds.
func TestOutputsCheckedAtStart(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text.txt")
	writeFile(t, text, "a b c\n")
	readOnly := filepath.Join(dir, "ro")
	if err := os.Mkdir(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		readOnly = "/sys" // writes are refused there even to root
		if st, err := os.Stat(readOnly); err != nil || !st.IsDir() {
			t.Skip("running as root, with no read-only directory to write to")
		}
	}
	notDir := filepath.Join(dir, "file")
	writeFile(t, notDir, "x\n")
	// The generator would run for an hour.
	hour := []string{"run", "ysb", "--duration", "1h", "--rate", "1000"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(hour, "--out", filepath.Join(dir, "no-such-dir", "out.csv")), "--out " + filepath.Join(dir, "no-such-dir", "out.csv") + ": directory " + filepath.Join(dir, "no-such-dir") + " does not exist"},
		{append(hour, "--out", filepath.Join(readOnly, "out.csv")), "--out " + filepath.Join(readOnly, "out.csv") + ": cannot be created"},
		{append(hour, "--out", dir), "--out " + dir + ": is a directory"},
		{append(hour, "--checkpoint-dir", filepath.Join(notDir, "ckpt")), "--checkpoint-dir " + filepath.Join(notDir, "ckpt") + ": " + notDir + " is not a directory"},
		{append(hour, "--checkpoint-dir", filepath.Join(readOnly, "ckpt")), "--checkpoint-dir " + filepath.Join(readOnly, "ckpt") + ": cannot be written"},
		{append(hour, "--state", "pebble", "--state-dir", notDir), "--state-dir " + notDir + ": is not a directory"},
		{[]string{"run", "wordcount", "--input", text, "--out", filepath.Join(readOnly, "w.csv")}, "cannot be created"},
	} {
		t.Run(c.want, func(t *testing.T) {
			start := time.Now()
			refused(t, c.args, nil, c.want)
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("the refusal took %v", took)
			}
		})
	}

	// A run that fails leaves an earlier output alone.
	bad := filepath.Join(dir, "bad.jsonl")
	writeLines(t, bad, []string{"not json"})
	campaigns, out := filepath.Join(dir, "campaigns.csv"), filepath.Join(dir, "out.csv")
	writeFile(t, campaigns, "ad_id,campaign_id\na,c\n")
	writeFile(t, out, "earlier output\n")
	mustFail(t, []string{"run", "ysb", "--events", bad, "--campaigns", campaigns, "--out", out}, bad+":1:")
	if got := readFile(t, out); got != "earlier output\n" {
		t.Errorf("a failed run changed its output to %q", got)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".weir-check-*")); len(m) > 0 {
		t.Errorf("the checks left %v behind", m)
	}
	if strings.Contains(readOnly, dir) {
		os.Chmod(readOnly, 0o755)
	}
}
