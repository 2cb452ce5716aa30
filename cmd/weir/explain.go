package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/wordcount"
	"github.com/weirstream/weir/jobs/ysb"
)

func explainCmd() *cobra.Command {
	var (
		jf     jobFlags
		format string
	)
	cmd := &cobra.Command{
		Use:       "explain JOB",
		Short:     "Print the physical plan of a built-in job (ysb, wordcount)",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"ysb", "wordcount"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "dot" {
				return fmt.Errorf("--format %q: want text or dot", format)
			}
			job := weir.NewJob(args[0], jf.options()...)
			switch args[0] {
			case "ysb":
				g := gen.YSB{Events: 1}
				weir.Sink(ysb.Query(weir.Source(job, "events", g), ysb.FromAds(g.Ads()), 5*time.Second), &ysb.Collector{}, weir.Name("collect"))
			case "wordcount":
				lines := weir.Source(job, "lines", file.Lines([]string{"input.txt"}, file.Options{}))
				weir.Sink(wordcount.Query(lines), &weir.Collect[wordcount.Result]{}, weir.Name("collect"))
			default:
				return fmt.Errorf("unknown job %q; want ysb or wordcount", args[0])
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
