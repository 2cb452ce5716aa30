package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/jobs/ysb"
)

// badLetter is what a dead letter must say of a bad line.
type badLetter struct {
	file           string
	line, offset   int64
	reason, record string
}

// scanBad finds the bad lines of an events file by trying to decode each
// line as the job does.
func scanBad(t *testing.T, path string, camp ysb.Campaigns) []badLetter {
	t.Helper()
	decode := ysb.Decoder(camp)
	var bad []badLetter
	off := int64(0)
	for i, line := range strings.SplitAfter(readFile(t, path), "\n") {
		if rec := strings.TrimSuffix(line, "\n"); rec != "" {
			if _, err := decode(rec); err != nil {
				bad = append(bad, badLetter{path, int64(i + 1), off, err.Error(), rec})
			}
		}
		off += int64(len(line))
	}
	return bad
}

func sortBad(b []badLetter) []badLetter {
	slices.SortFunc(b, func(x, y badLetter) int { return int(x.offset - y.offset) })
	return b
}

// deadInput writes 80,000 YSB events with 40 bad lines of every kind
// spread among them, and returns the files, the bad lines as a plain scan
// finds them and the reference output.
func deadInput(t *testing.T, dir string) (events, campaigns string, bad []badLetter, ref string) {
	t.Helper()
	evs, camp := ysbInput(80_000, 31, 36_000)
	var withBad []string
	for i, l := range jsonLines(evs) {
		withBad = append(withBad, l)
		if i%2_000 == 1_000 {
			withBad = append(withBad, badYSBLines(evs[i])[(i/2_000)%4])
		}
	}
	events, campaigns = filepath.Join(dir, "events.jsonl"), filepath.Join(dir, "campaigns.csv")
	writeLines(t, events, withBad)
	writeCampaigns(t, campaigns, camp)
	bad = sortBad(scanBad(t, events, camp))
	if len(bad) != 40 {
		t.Fatalf("%d bad lines in the input, want 40", len(bad))
	}
	return events, campaigns, bad, ysbCSV(t, evs, camp)
}

// checkDead checks that the dead-letter files of path hold the bad lines
// once each, and that each file ends with a whole line.
func checkDead(t *testing.T, path string, want []badLetter, files ...string) {
	t.Helper()
	letters, err := file.ReadDeadLetters(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []badLetter
	for _, l := range letters {
		if l.Source != "events" {
			t.Errorf("letter %+v: source %q, want events", l, l.Source)
		}
		got = append(got, badLetter{l.File, l.Line, l.Offset, l.Reason, l.Record})
	}
	if sortBad(got); !slices.Equal(got, want) {
		t.Errorf("the dead-letter files hold %d letters, want the %d bad lines once each:\n%s", len(got), len(want), diffBad(got, want))
	}
	for _, p := range files {
		if b, err := os.ReadFile(p); err != nil || len(b) > 0 && b[len(b)-1] != '\n' {
			t.Errorf("%s: %v, or an incomplete last line", p, err)
		}
	}
}

// badCount adds up the bad lines the processes report in log.
func badCount(log string) int {
	total := 0
	for _, m := range regexp.MustCompile(`ysb: .*?(\d+) bad lines in `).FindAllStringSubmatch(log, -1) {
		n, _ := strconv.Atoi(m[1])
		total += n
	}
	return total
}

// YSB over 3 processes with bad lines and a dead-letter file survives
// SIGKILLs: the dead-letter files together hold every bad line exactly
// once, with its position and reason, the processes' counts add up to
// all of them, and the output equals the failure-free reference.
func TestChaosYSBDeadLetter(t *testing.T) {
	dir := t.TempDir()
	events, campaigns, want, ref := deadInput(t, dir)
	out, dead := filepath.Join(dir, "out.csv"), filepath.Join(dir, "dead.jsonl")
	log := chaos(t, 2, 2*time.Second, "run", "ysb", "--events", events, "--campaigns", campaigns, "--out", out,
		"--dead-letter", dead, "--rate", "10000", "--workers", "1", "--interval", "100ms",
		"--checkpoint-dir", filepath.Join(dir, "ckpt"), "--checkpoint-interval", "500ms")
	if !strings.Contains(log, "restoring checkpoint") {
		t.Errorf("no run restored a checkpoint:\n%s", log)
	}
	if got := readFile(t, out); got != ref {
		t.Errorf("output differs from the reference\n%s\n%s", firstDiff(got, ref), log)
	}
	var files []string
	for i := range 3 {
		files = append(files, fmt.Sprintf("%s.process-%d", dead, i))
	}
	checkDead(t, dead, want, files...)
	// The processes' counts of the last attempt add up to them all.
	last := log[strings.LastIndex(log, "weir launch: process 0 pid"):]
	if n := badCount(last); n != len(want) {
		t.Errorf("the processes report %d bad lines in all, want %d:\n%s", n, len(want), last)
	}
}

// The same in one process, killed once and run again by hand; the
// dead-letter file cannot be one of the job's other files.
func TestRunYSBDeadLetterRestart(t *testing.T) {
	dir := t.TempDir()
	events, campaigns, want, ref := deadInput(t, dir)
	out, dead := filepath.Join(dir, "out.csv"), filepath.Join(dir, "dead.jsonl")
	args := []string{"run", "ysb", "--events", events, "--campaigns", campaigns, "--out", out,
		"--dead-letter", dead, "--rate", "20000", "--workers", "1", "--interval", "100ms",
		"--checkpoint-dir", filepath.Join(dir, "ckpt"), "--checkpoint-interval", "300ms"}
	cmd := exec.Command(weirBin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("the job ended before it was killed; make its input longer")
	}
	before, err := file.ReadDeadLetters(dead)
	if err != nil || len(before) == 0 || len(before) == len(want) {
		t.Fatalf("the killed run left %d letters (%v); want some of the %d", len(before), err, len(want))
	}
	r := mustSucceed(t, args...)
	if !strings.Contains(r.stderr, "restoring checkpoint") {
		t.Errorf("the second run restored no checkpoint:\n%s", r.stderr)
	}
	if got := readFile(t, out); got != ref {
		t.Errorf("output differs from the reference\n%s", firstDiff(got, ref))
	}
	checkDead(t, dead, want, dead)
	if n := badCount(r.stderr); n != len(want) {
		t.Errorf("the second run reports %d bad lines, want %d:\n%s", n, len(want), r.stderr)
	}

	data := readFile(t, events)
	for _, same := range []string{events, campaigns, out, filepath.Join(dir, ".", "events.jsonl")} {
		bad := slices.Clone(args)
		bad[slices.Index(bad, dead)] = same
		mustFail(t, bad, "--dead-letter", "must not")
	}
	if readFile(t, events) != data {
		t.Error("a refused --dead-letter changed the events file")
	}
}

// diffBad lists the letters missing from got and those too many.
func diffBad(got, want []badLetter) string {
	count := map[badLetter]int{}
	for _, w := range want {
		count[w]++
	}
	for _, g := range got {
		count[g]--
	}
	var b strings.Builder
	for k, n := range count {
		switch {
		case n > 0:
			fmt.Fprintf(&b, "missing: %s:%d %q\n", k.file, k.line, k.record)
		case n < 0:
			fmt.Fprintf(&b, "%d too many: %s:%d %q (%s)\n", -n, k.file, k.line, k.record, k.reason)
		}
	}
	return b.String()
}
