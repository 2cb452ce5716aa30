package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// weir launch --elastic starts and stops the processes of an elastic
// word count that sizes itself, as its autoscaler says. The count takes
// 1 ms a word (--cost); the lines have five words each at first, read at
// 600 a second (3000 words a second: about five instances at 80 %, more
// than process 0's two), then one (600 words a second: one instance).
// Launch starts process 0 alone; when the job says more processes are
// needed, launch starts processes that join, and when it says fewer
// would do, it sends SIGTERM to the highest, which leave it. The output
// equals the reference count, and launch exits 0.
func TestLaunchElasticAutoscale(t *testing.T) {
	dir := t.TempDir()
	var text strings.Builder
	for i := range 8000 {
		for j := range 5 {
			fmt.Fprintf(&text, "w%d ", (i*5+j)%997)
		}
		text.WriteString("\n")
	}
	for i := range 14000 {
		fmt.Fprintf(&text, "v%d\n", i%991)
	}
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.csv")
	writeFile(t, in, text.String())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, weirBin, "launch", "-n", "1", "--slots", "3", "--elastic", "--",
		"run", "wordcount", "--input", in, "--out", out, "--rate", "600", "--cost", "1ms", "--partitioning", "hash",
		"--autoscale", "--workers", "2", "--interval", "50ms")
	errb := &lockedWriter{b: &strings.Builder{}}
	cmd.Stderr = errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("the job: %v\n%s", err, errb.String())
	}
	log := errb.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`\[0\] .*start more processes.* processes=1`),
		regexp.MustCompile(`weir launch: process [12] pid`),
		regexp.MustCompile(`a process joins the job`),
		regexp.MustCompile(`fewer processes would do`),
		regexp.MustCompile(`weir launch: process [12] leaves the job`),
		regexp.MustCompile(`\[[12]\] weir: terminated: this process leaves the job`),
	} {
		if !want.MatchString(log) {
			t.Errorf("launch's standard error does not match %q:\n%s", want, log)
		}
	}
	if got, want := readFile(t, out), wordcountCSV(text.String()); got != want {
		t.Errorf("the output differs from the reference\n%s", firstDiff(got, want))
	}
}
