package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir/internal/report"
)

const defaultReportOut = "docs/benchmarks.md"

func benchReportCmd() *cobra.Command {
	var (
		out   string
		from  []string
		quick bool
	)
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Run the benchmark suites (or read their JSON lines) and write a markdown page with tables and PNG plots",
		Long: `Runs the suites as commands of this binary, one after another: Nexmark
(every query, with the hand-written loop at 1 and 2 workers, and as 2
processes under launch), YSB (likewise), skew (every strategy at 2, 4 and 8
partitions, and the planners' simulation up to 64), fission and transport.
It records every JSON line they print, with the exact command and the
machine, in DIR/results.jsonl (DIR: --out without .md), and writes --out
with tables of every figure and PNG plots in DIR. A command that fails or
prints nothing is recorded too, and the page says its suite is not
available: no figure is ever filled in.

With --from it runs nothing and builds the page from results files (the
results.jsonl of an earlier report, or lines copied from weir bench
commands' output). --quick shrinks every run to a test's size.

  weir bench report
  weir bench report --from docs/benchmarks/results.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !strings.HasSuffix(out, ".md") {
				return fmt.Errorf("--out %s: the page must be a .md file", out)
			}
			if len(from) > 0 && quick {
				return fmt.Errorf("--quick sizes runs, and --from runs nothing: give one of them")
			}
			plotDir := strings.TrimSuffix(out, ".md")
			var entries []report.Entry
			var err error
			if len(from) > 0 {
				entries, err = readResults(from)
			} else {
				entries, err = runSuites(cmd.Context(), cmd.Root(), report.Plan(quick), filepath.Join(plotDir, "results.jsonl"))
			}
			if err != nil {
				return err
			}
			return writeReport(entries, out, plotDir, from, quick)
		},
	}
	cmd.Flags().StringVar(&out, "out", defaultReportOut, "the page to write; its plots and results.jsonl go in the directory of the same name without .md")
	cmd.Flags().StringArrayVar(&from, "from", nil, "build the page from this results `FILE` instead of running the suites (repeatable)")
	cmd.Flags().BoolVar(&quick, "quick", false, "tiny runs, for a test")
	return cmd
}

// readResults reads results files.
func readResults(paths []string) ([]report.Entry, error) {
	var all []report.Entry
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		es, err := report.Read(f, p)
		f.Close()
		if err != nil {
			return nil, err
		}
		all = append(all, es...)
	}
	return all, nil
}

// runSuites runs each command of plan as a process of this binary, one
// after another, and records the machine and what each printed in
// results.
func runSuites(ctx context.Context, root *cobra.Command, plan []report.Run, results string) ([]report.Entry, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(results), 0o755); err != nil {
		return nil, err
	}
	m := hostMachine(time.Now())
	entries := []report.Entry{{Kind: report.KindMachine, Machine: &m}}
	for i, r := range plan {
		fmt.Fprintf(os.Stderr, "weir bench report: (%d/%d) %s\n", i+1, len(plan), r.Command())
		es := []report.Entry{{Kind: report.KindMissing, Suite: r.Suite, Command: r.Command(),
			Reason: "this weir binary has no such command, so it was not run"}}
		if hasCommand(root, r.Args) {
			if es, err = runOne(ctx, exe, r); err != nil {
				return nil, err
			}
		}
		for _, e := range es {
			if e.Kind == report.KindMissing {
				fmt.Fprintf(os.Stderr, "weir bench report: no result: %s\n", e.Reason)
			}
		}
		entries = append(entries, es...)
	}
	b, _ := os.ReadFile("/proc/loadavg")
	m.LoadEnd = report.LoadAverage(string(b)) // entries[0] holds &m
	var buf bytes.Buffer
	for _, e := range entries {
		b, err := e.MarshalLine()
		if err != nil {
			return nil, err
		}
		buf.Write(b)
	}
	return entries, os.WriteFile(results, buf.Bytes(), 0o644)
}

// runOne runs one command and returns its result entries, and a missing
// entry saying why if it failed or printed none. Only the context's end
// is an error: a command that fails is recorded as such.
func runOne(ctx context.Context, exe string, r report.Run) ([]report.Entry, error) {
	c := exec.CommandContext(ctx, exe, r.Args...)
	// Stopping the report stops the command cleanly (launch passes the
	// signal on to its processes), and kills it if it lingers.
	c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
	c.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	t0 := time.Now()
	runErr := c.Run()
	wall := time.Since(t0).Seconds()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	missing := func(reason string) report.Entry {
		return report.Entry{Kind: report.KindMissing, Suite: r.Suite, Command: r.Command(), WallSeconds: wall, Reason: reason}
	}
	// Process 0's lines pass through launch as they are; others are
	// prefixed, and no line but a result starts with "{". A command that
	// fails may have printed results (bench nexmark prints a query whose
	// check failed before it fails): they are kept, with the failure.
	var lines bytes.Buffer
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); bytes.HasPrefix(l, []byte("{")) {
			lines.Write(l)
			lines.WriteByte('\n')
		}
	}
	es, err := report.Read(&lines, r.Command())
	if err != nil {
		return []report.Entry{missing(fmt.Sprintf("its output could not be read: %v", err))}, nil
	}
	for i := range es {
		if es[i].Kind != report.KindResult || es[i].Suite != r.Suite {
			return []report.Entry{missing(fmt.Sprintf("it printed a line of suite %q, not %q", es[i].Suite, r.Suite))}, nil
		}
		es[i].Command, es[i].WallSeconds, es[i].File, es[i].Line = r.Command(), wall, "", 0
	}
	switch {
	case runErr != nil:
		es = append(es, missing(fmt.Sprintf("failed (%v): %s", runErr, lastLines(stderr.String(), 3))))
	case len(es) == 0:
		es = append(es, missing("it printed no JSON line"))
	}
	return es, nil
}

// hasCommand reports whether root has the command args name (after
// launch's own arguments): "bench nexmark" may not exist yet.
func hasCommand(root *cobra.Command, args []string) bool {
	if i := slices.Index(args, "--"); i >= 0 && len(args) > 0 && args[0] == "launch" {
		args = args[i+1:]
	}
	c := root
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			break
		}
		i := slices.IndexFunc(c.Commands(), func(sc *cobra.Command) bool { return sc.Name() == a })
		if i < 0 {
			return false
		}
		c = c.Commands()[i]
	}
	return true
}

// lastLines returns the last n non-empty lines of s, joined by "; ".
func lastLines(s string, n int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	if len(out) == 0 {
		return "nothing on standard error"
	}
	return strings.Join(out, "; ")
}

// hostMachine describes this machine, the Go that built this binary and
// the source's commit.
func hostMachine(now time.Time) report.Machine {
	read := func(p string) string {
		b, _ := os.ReadFile(p)
		return string(b)
	}
	return report.Machine{
		CPU:         report.CPUModel(read("/proc/cpuinfo")),
		Cores:       runtime.NumCPU(),
		MemoryBytes: report.MemTotal(read("/proc/meminfo")),
		Go:          runtime.Version(),
		Platform:    runtime.GOOS + "/" + runtime.GOARCH,
		Date:        now.UTC().Format(time.RFC3339),
		Load:        report.LoadAverage(read("/proc/loadavg")),
		Commit:      gitCommit(),
	}
}

// gitCommit returns the commit of the working directory's repository,
// with "-dirty" if it has changes, or "" if git cannot tell.
func gitCommit() string {
	head, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(head))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		s += "-dirty"
	}
	return s
}

// writeReport writes the page and its plots, and removes the plots of an
// earlier page that this one has not.
func writeReport(entries []report.Entry, out, plotDir string, from []string, quick bool) error {
	gen := "`go run ./cmd/weir bench report"
	if out != defaultReportOut {
		gen += " --out " + out
	}
	if len(from) == 0 {
		from = []string{filepath.Join(plotDir, "results.jsonl")}
	}
	rebuild := gen
	for _, f := range from {
		rebuild += " --from " + f
	}
	rebuild += "` builds it again from the lines recorded, running nothing"
	run := gen + "` runs every suite (a few minutes on 2 cores; more when other work shares them) and writes this page, its plots and the lines the commands printed (" +
		filepath.Join(plotDir, "results.jsonl") + ")"
	if quick {
		run = gen + " --quick` does the same with runs of a test's size"
	}
	r, err := report.Build(entries, report.Options{
		PlotDir:    filepath.Base(plotDir),
		Built:      time.Now().UTC().Format(time.RFC3339),
		Regenerate: []string{run, rebuild},
	})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(plotDir, 0o755); err != nil {
		return err
	}
	for _, name := range report.PlotNames {
		if err := os.Remove(filepath.Join(plotDir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	for _, p := range r.Plots {
		if err := os.WriteFile(filepath.Join(plotDir, p.Name), p.Data, 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(out, r.Markdown, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "weir bench report: wrote %s and %d plots in %s\n", out, len(r.Plots), plotDir)
	return nil
}
