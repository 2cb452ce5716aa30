package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
)

func pipeCmd() *cobra.Command {
	var (
		jf      jobFlags
		source  string
		sink    string
		bounded bool
		rate    float64
	)
	cmd := &cobra.Command{
		Use:   "pipe",
		Short: "Copy records (lines, messages) from a source to a sink",
		Long: `Copies every record of --source to --sink, as Kafka's console producer and
consumer do: a file into a topic, a topic into a file, a topic into another
topic or a NATS stream. The records are lines of a file or message values,
copied as they are; with several --workers their order is not kept.

  weir pipe --source file://events.jsonl --sink kafka://127.0.0.1:9092/ad-events
  weir pipe --source kafka://127.0.0.1:9092/results --sink file://results.csv --bounded

With --checkpoint-dir a Kafka sink is exactly-once (a restarted pipe
writes each record once for a read_committed reader), and so is a file
sink (cut back to its length at the checkpoint); a NATS sink gives each
message an id of its own, so a restarted pipe may publish some again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if source == "" || sink == "" {
				return fmt.Errorf("pipe needs --source URI and --sink URI")
			}
			src, err := parseEndpoint("--source", source, "kafka", "nats", "file")
			if err != nil {
				return err
			}
			dst, err := parseEndpoint("--sink", sink, "kafka", "nats", "file")
			if err != nil {
				return err
			}
			if err := checkRate(cmd, rate); err != nil {
				return err
			}
			ctx, release := jobSignals(cmd.Context(), &jf)
			defer release()
			return runPipe(ctx, jf, src, dst, bounded, rate)
		},
	}
	jf.register(cmd.Flags())
	cmd.Flags().StringVar(&source, "source", "", "where to read: kafka://host:port/topic, nats://host:port/stream or file://path")
	cmd.Flags().StringVar(&sink, "sink", "", "where to write: kafka://host:port/topic, nats://host:port/stream or file://path")
	cmd.Flags().Float64Var(&rate, "rate", 0, "copy at most this many records per second (0: as fast as they come)")
	cmd.Flags().BoolVar(&bounded, "bounded", false, "stop at the records that were the latest when the pipe started (a file always ends)")
	return cmd
}

func runPipe(ctx context.Context, jf jobFlags, src, dst endpoint, bounded bool, rate float64) error {
	var ps paths
	if src.scheme == "file" {
		ps.input("--source", src.name)
	}
	if dst.scheme == "file" {
		ps.output("--sink", dst.name, jf.cluster.leader())
	}
	ps.jobDirs(&jf)
	if err := ps.check(); err != nil {
		return err
	}
	in, err := lineSource(src, bounded, (*file.DeadLetter)(nil), func(s string) (string, error) { return s, nil }, nil)
	if err != nil {
		return err
	}
	out, err := lineSink(dst, func(s string, b []byte) []byte { return append(b, s...) }, true)
	if err != nil {
		return err
	}
	if err := checkNow(ctx, in, out); err != nil {
		return err
	}
	if rate > 0 {
		in = weir.Paced(in, rate)
	}
	job := weir.NewJob("pipe", jf.options()...)
	weir.Sink(weir.Source(job, "source", in), out, weir.Name("sink"))
	start := time.Now()
	if err := jf.observe.run(ctx, job); err != nil {
		return stoppedRun(err, "pipe", job.Metrics(), jf, dst.uri)
	}
	if jf.cluster.leader() {
		m := job.Metrics()
		secs := time.Since(start).Seconds()
		fmt.Fprintf(os.Stderr, "pipe: %d records%s from %s to %s in %.2fs (%.0f records/s)\n", m.Records, readSince(m, jf), src.uri, dst.uri, secs, float64(m.Records)/secs)
	}
	return nil
}
