package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// defaultGOGC is the garbage collector's target when GOGC is not set. A
// stream processor allocates mostly short-lived input buffers (1 MiB file
// chunks, pooled batches); collecting at 4x the live heap instead of 2x
// halves the collections and the page faults of memory the runtime gave
// back to the system, for a few times a small live heap in memory.
const defaultGOGC = 400

func main() {
	freePagesLazily()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGOGC)
	}
	setMemoryLimit()
	if err := rootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "weir:", message(err))
		os.Exit(1)
	}
}

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "weir",
		Short:         "Weir is a stream processing engine",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := resolveCluster(cmd); err != nil {
				return err
			}
			return checkJobFlags(cmd)
		},
	}
	run := &cobra.Command{Use: "run JOB", Short: "Run a built-in job"}
	run.AddCommand(runYSBCmd(), runWordcountCmd(), runNexmarkCmd())
	bench := &cobra.Command{Use: "bench JOB", Short: "Benchmark a built-in job and print one JSON object"}
	bench.AddCommand(benchYSBCmd(), benchYSBJSONCmd(), benchSkewCmd(), benchFissionCmd(), benchTransportCmd(), benchNexmarkCmd(), benchRescaleCmd(), benchAutoscaleCmd())
	bench.AddCommand(benchReportCmd())
	gen := &cobra.Command{Use: "gen EVENTS", Short: "Write generated events to a file"}
	gen.AddCommand(genNexmarkCmd(), genYSBCmd())
	root.AddCommand(run, bench, gen, explainCmd(), launchCmd(), traceCmd(), diagnoseCmd(), rescaleCmd(), devCmd(), pipeCmd(), ysbSetupCmd())
	for _, c := range []*cobra.Command{run, bench, gen} {
		c.Args = cobra.NoArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			return fmt.Errorf("%s needs a job: %s", cmd.Name(), subNames(cmd))
		}
	}
	return root
}

func subNames(c *cobra.Command) string {
	s := ""
	for i, sc := range c.Commands() {
		if i > 0 {
			s += ", "
		}
		s += sc.Name()
	}
	return s
}

// checkJobFlags checks the job flags of the command that runs, before it
// does anything.
func checkJobFlags(cmd *cobra.Command) error {
	for _, f := range registered {
		if f.fs == cmd.Flags() {
			return f.check()
		}
	}
	return nil
}

// message is err as one line for "weir: " to prefix: without the "weir: "
// the engine's errors start with, and with no prefix twice in a row
// ("file: file: ").
func message(err error) string {
	s := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
	for strings.HasPrefix(s, "weir: ") {
		s = strings.TrimPrefix(s, "weir: ")
	}
	parts := strings.Split(s, ": ")
	out := parts[:1]
	for _, p := range parts[1:] {
		if last := out[len(out)-1]; p == last && isWord(p) {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, ": ")
}

// isWord reports whether s is a lower-case word, as prefixes are.
func isWord(s string) bool {
	for _, c := range s {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}
