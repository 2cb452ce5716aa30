package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir/internal/trace"
	"github.com/weirstream/weir/internal/trace/critical"
)

func traceCmd() *cobra.Command {
	c := &cobra.Command{Use: "trace", Short: "Analyse activity traces written with --trace FILE", Args: cobra.NoArgs}
	c.AddCommand(traceAnalyzeCmd())
	c.RunE = func(cmd *cobra.Command, args []string) error {
		return fmt.Errorf("%s needs a subcommand: %s", cmd.Name(), subNames(cmd))
	}
	return c
}

func traceAnalyzeCmd() *cobra.Command {
	var (
		window time.Duration
		chrome string
		top    int
	)
	cmd := &cobra.Command{
		Use:   "analyze FILE...",
		Short: "Rank operators, workers and activities by critical participation",
		Long: `Reads the trace files of a job's processes (--trace FILE writes FILE, or
FILE.process-I for each process I of several), merges them, cuts the
trace into windows and prints, over all windows, each activity type's,
operator's, worker's and worker pair's critical participation (its share
of the critical paths, SnailTrail's CP) next to its share of busy time,
and names the bottleneck. --chrome writes the trace for Perfetto or
chrome://tracing.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if window <= 0 {
				return fmt.Errorf("--window %v: must be positive", window)
			}
			if top < 0 {
				return fmt.Errorf("--top %d: must not be negative", top)
			}
			var ps paths
			ps.input("FILE", args...)
			ps.output("--chrome", chrome, true)
			if err := ps.check(); err != nil {
				return err
			}
			return analyzeTraces(cmd.OutOrStdout(), cmd.ErrOrStderr(), args, window, chrome, top)
		},
	}
	cmd.Flags().DurationVar(&window, "window", time.Second, "length of the windows CP is computed over")
	cmd.Flags().StringVar(&chrome, "chrome", "", "also write the trace in the Chrome trace event format (Perfetto) to `OUT.json`")
	cmd.Flags().IntVar(&top, "top", 10, "rows per group (0: all)")
	return cmd
}

// readTraces reads and merges files; a file cut short (a process that
// died) is used as far as it is whole, with a warning.
func readTraces(files []string, warn io.Writer) (*trace.Trace, error) {
	var ts []*trace.Trace
	for _, f := range files {
		t, err := trace.ReadFile(f)
		if errors.Is(err, trace.ErrTruncated) {
			fmt.Fprintf(warn, "weir: %v; using its whole blocks\n", err)
		} else if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	t, err := trace.Merge(ts...)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", files, err)
	}
	return t, nil
}

func analyzeTraces(out, warn io.Writer, files []string, window time.Duration, chrome string, top int) error {
	t, err := readTraces(files, warn)
	if err != nil {
		return err
	}
	if chrome != "" {
		if err := writeChrome(chrome, t); err != nil {
			return err
		}
	}
	x := critical.NewIndex(t)
	s := critical.NewSummary(t)
	for _, w := range x.Windows(int64(window)) {
		s.Add(w)
	}
	lo, hi := x.Span()
	fmt.Fprintf(out, "%d events of %d workers in %d process(es) over %v; %d windows of %v with a critical path, %d without",
		len(t.Events), len(t.Workers), max(1, t.Processes), time.Duration(hi-lo).Round(time.Millisecond), s.Windows, window, s.Empty)
	if d := x.Dropped + s.Dropped; d > 0 {
		fmt.Fprintf(out, "; %d message edges dropped (received before sent: clocks apart)", d)
	}
	fmt.Fprintln(out)
	if s.Windows == 0 {
		fmt.Fprintln(out, critical.Bottleneck(nil))
		return nil
	}
	rows := s.Rows()
	fmt.Fprintln(out)
	fmt.Fprint(out, critical.TableTop(rows, top))
	fmt.Fprintln(out)
	fmt.Fprintln(out, "bottleneck:", critical.Bottleneck(rows))
	return nil
}

func writeChrome(path string, t *trace.Trace) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := trace.WriteChrome(f, t); err != nil {
		f.Close()
		return fmt.Errorf("--chrome %s: %w", path, err)
	}
	return f.Close()
}
