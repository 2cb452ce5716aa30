package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/fission"
	"github.com/weirstream/weir/jobs/wordcount"
	"github.com/weirstream/weir/jobs/ysb"
)

func explainCmd() *cobra.Command {
	var (
		jf     jobFlags
		format string
	)
	cmd := &cobra.Command{
		Use:   "explain JOB",
		Short: "Print the physical plan of a built-in job (ysb, wordcount, fission)",
		Long: `Prints the plan the planner makes of a built-in job: its parallel regions
(serial, stateless or keyed, with their parallelism and, with --ordered, how
each region's exit restores order), the tasks in each (fused chains), every
operator's declared state and selectivity, and the exchange on each edge
(forward, round-robin or keygroup split or shuffle, gather, ordered merge).
--format dot prints the same as a Graphviz graph.`,
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: []string{"ysb", "wordcount", "fission"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("explain needs a job: ysb, wordcount or fission")
			}
			if format != "text" && format != "dot" {
				return fmt.Errorf("--format %q: want text or dot", format)
			}
			if err := jf.observe.refuse("explain runs none"); err != nil {
				return err
			}
			job := weir.NewJob(args[0], jf.options()...)
			switch args[0] {
			case "ysb":
				g := gen.YSB{Events: 1}
				weir.Sink(ysb.Query(weir.Source(job, "events", g), ysb.FromAds(g.Ads()), 5*time.Second), &ysb.Collector{}, weir.Name("collect"))
			case "wordcount":
				lines := weir.Source(job, "lines", file.Lines([]string{"input.txt"}, file.Options{}))
				weir.Sink(wordcount.Query(lines), &weir.Collect[wordcount.Result]{}, weir.Name("collect"))
			case "fission":
				recs := weir.Source(job, "records", weir.SliceSource[fission.Record]{})
				weir.Sink(fission.Query(recs, fission.Config{Rounds: 500, Keyed: true}), &fission.Checksum{}, weir.Name("checksum"))
			default:
				return fmt.Errorf("unknown job %q; want ysb, wordcount or fission", args[0])
			}
			explain := job.Explain
			if format == "dot" {
				explain = job.ExplainDot
			}
			plan, err := explain()
			if err != nil {
				return err
			}
			fmt.Print(plan)
			return nil
		},
	}
	jf.register(cmd.Flags())
	cmd.Flags().StringVar(&format, "format", "text", "text, or dot for Graphviz")
	return cmd
}
