package main

import (
	"fmt"
	"os"
	"runtime/debug"

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
	if err := rootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "weir:", err)
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
			return resolveCluster(cmd)
		},
	}
	run := &cobra.Command{Use: "run JOB", Short: "Run a built-in job"}
	run.AddCommand(runYSBCmd(), runWordcountCmd())
	bench := &cobra.Command{Use: "bench JOB", Short: "Benchmark a built-in job and print one JSON object"}
	bench.AddCommand(benchYSBCmd(), benchYSBJSONCmd(), benchSkewCmd(), benchFissionCmd(), benchTransportCmd())
	root.AddCommand(run, bench, explainCmd(), launchCmd())
	for _, c := range []*cobra.Command{run, bench} {
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
