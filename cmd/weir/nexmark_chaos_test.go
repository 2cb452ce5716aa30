package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/nexmark"
)

// badNexmarkLines are bad lines of every kind made from a good bid line:
// an unknown kind, a missing field, a field of another kind, a string for
// a number, a time past 2^53 ms, a fraction, and a line that is not JSON.
func badNexmarkLines(bid string) []string {
	return []string{
		strings.Replace(bid, `"kind":"bid"`, `"kind":"car"`, 1),
		strings.Replace(bid, `"kind":"bid"`, `"kind":"bid","seller":1`, 1),
		strings.Replace(bid, `"kind":"bid",`, ``, 1),
		regexp.MustCompile(`"price":\d+`).ReplaceAllString(bid, `"price":"12"`),
		regexp.MustCompile(`"dateTime":\d+`).ReplaceAllString(bid, `"dateTime":9007199254740993`),
		regexp.MustCompile(`"bidder":\d+`).ReplaceAllString(bid, `"bidder":1.5`),
		bid[:len(bid)/2],
	}
}

// withBadLines writes n generated events with a bad line after every
// 1000th, and returns the file, the good events and the bad lines as a
// plain scan with DecodeJSON finds them.
func withBadLines(t *testing.T, dir string, n int, eventRate string) (string, []gen.NexmarkEvent, []badLetter) {
	t.Helper()
	path, evs := genNexmarkFile(t, dir, n, eventRate, 11)
	var lines []string
	for i, l := range strings.Split(strings.TrimSuffix(readFile(t, path), "\n"), "\n") {
		lines = append(lines, l)
		if i%1000 == 999 && evs[i].Kind == gen.BidKind {
			bad := badNexmarkLines(l)
			lines = append(lines, bad[(i/1000)%len(bad)])
		}
	}
	writeLines(t, path, lines)
	var bad []badLetter
	off := int64(0)
	for i, l := range lines {
		if _, err := nexmark.DecodeJSON(l); err != nil {
			bad = append(bad, badLetter{path, int64(i + 1), off, err.Error(), l})
		}
		off += int64(len(l)) + 1
	}
	if len(bad) < len(badNexmarkLines(lines[0])) || len(bad) != len(lines)-len(evs) {
		t.Fatalf("%d bad lines of %d, %d events", len(bad), len(lines), len(evs))
	}
	return path, evs, bad
}

// nexmarkBadCount adds up the bad lines the processes report in log.
func nexmarkBadCount(log string) int {
	total := 0
	for _, m := range regexp.MustCompile(`nexmark q\d+: .*?(\d+) bad lines in `).FindAllStringSubmatch(log, -1) {
		n, _ := strconv.Atoi(m[1])
		total += n
	}
	return total
}

// Bad lines stop the job with their file and line, or go to the
// dead-letter file with their position and reason while the result is
// that of the good lines.
func TestRunNexmarkBadLines(t *testing.T) {
	dir := t.TempDir()
	events, evs, bad := withBadLines(t, dir, 8_000, "100")
	q := nexmark.Names()[len(nexmark.Names())-1]
	out, dead := filepath.Join(dir, "out.csv"), filepath.Join(dir, "dead.jsonl")
	mustFail(t, []string{"run", "nexmark", "--query", q, "--input", events, "--out", out, "--workers", "2"},
		fmt.Sprintf("%s:%d: %s", events, bad[0].line, bad[0].reason))
	r := mustSucceed(t, "run", "nexmark", "--query", q, "--input", events, "--out", out, "--dead-letter", dead, "--workers", "2")
	checkDead(t, dead, bad, dead)
	if n := nexmarkBadCount(r.stderr); n != len(bad) {
		t.Errorf("the run reports %d bad lines, want %d:\n%s", n, len(bad), r.stderr)
	}
	checkNexmark(t, q, readFile(t, out), evs, r.stderr)
}

// q5, q8 and q11 over 3 processes with checkpoints survive SIGKILLs: the
// result equals the reference, each row once; with bad lines, the
// dead-letter files hold each once.
func TestChaosNexmark(t *testing.T) {
	for _, c := range []struct {
		q, state string
		bad      bool
	}{{"q5", "memory", false}, {"q8", "pebble", false}, {"q11", "memory", true}} {
		t.Run(c.q, func(t *testing.T) {
			if nexmark.Header(c.q) == "" {
				t.Fatalf("no query %s", c.q)
			}
			dir := t.TempDir()
			var events string
			var evs []gen.NexmarkEvent
			var bad []badLetter
			if c.bad {
				events, evs, bad = withBadLines(t, dir, 36_000, "300")
			} else {
				events, evs = genNexmarkFile(t, dir, 36_000, "300", 12) // 120 s of event time
			}
			out, dead := filepath.Join(dir, "out.csv"), filepath.Join(dir, "dead.jsonl")
			args := []string{"run", "nexmark", "--query", c.q, "--input", events, "--out", out, "--rate", "4000",
				"--workers", "1", "--interval", "100ms", "--checkpoint-dir", filepath.Join(dir, "ckpt"), "--checkpoint-interval", "500ms",
				"--state", c.state, "--state-dir", filepath.Join(dir, "state")}
			if c.bad {
				args = append(args, "--dead-letter", dead)
			}
			log := chaos(t, 3, 1500*time.Millisecond, args...)
			if !strings.Contains(log, "restoring checkpoint") {
				t.Errorf("no run restored a checkpoint:\n%s", log)
			}
			checkNexmark(t, c.q, readFile(t, out), evs, log)
			if c.bad {
				var files []string
				for i := range 3 {
					files = append(files, fmt.Sprintf("%s.process-%d", dead, i))
				}
				checkDead(t, dead, bad, files...)
			}
		})
	}
}
