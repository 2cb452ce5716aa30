package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/jobs/wordcount"
)

func runWordcountCmd() *cobra.Command {
	var (
		jf     jobFlags
		inputs []string
		out    string
		stats  bool
		rate   float64
	)
	cmd := &cobra.Command{
		Use:   "wordcount",
		Short: "Count the words (strings.Fields) of text files",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			if len(inputs) == 0 {
				return fmt.Errorf("--input is required")
			}
			if out == "" {
				return fmt.Errorf("--out is required")
			}
			if err := checkFiles(inputs); err != nil {
				return err
			}
			return runWordcount(ctx, jf, inputs, out, stats, rate)
		},
	}
	jf.register(cmd.Flags())
	cmd.Flags().StringSliceVar(&inputs, "input", nil, "text `FILE`s to count (repeat or comma-separate)")
	cmd.Flags().StringVar(&out, "out", "", "output CSV `FILE` (word,count)")
	cmd.Flags().Float64Var(&rate, "rate", 0, "replay the lines at this many per second (0: as fast as possible)")
	cmd.Flags().BoolVar(&stats, "stats", false, "at the end, print the partitioning figures of the count on stderr as one JSON object")
	return cmd
}

func runWordcount(ctx context.Context, jf jobFlags, inputs []string, out string, stats bool, rate float64) error {
	job := weir.NewJob("wordcount", jf.options()...)
	col := &weir.Collect[wordcount.Result]{}
	in := file.Lines(inputs, file.Options{})
	if rate > 0 {
		in = weir.Paced(in, rate)
	}
	lines := weir.Source(job, "lines", in)
	weir.Sink(wordcount.Query(lines), col, weir.Name("collect"))
	start := time.Now()
	if err := job.Run(ctx); err != nil {
		return err
	}
	if !jf.cluster.leader() {
		return nil // process 0 writes the output
	}
	res := col.Records()
	wordcount.Sort(res)
	f, err := createOut(out)
	if err != nil {
		return err
	}
	if err := writeWordCounts(f, res); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wordcount: %d lines%s, %d distinct words in %.2fs, written to %s\n",
		job.Metrics().Records, jf.cluster.share(), len(res), time.Since(start).Seconds(), out)
	if stats {
		return json.NewEncoder(os.Stderr).Encode(partitionFigures(job, jf.partitioning.name))
	}
	return nil
}

func writeWordCounts(f *os.File, rs []wordcount.Result) error {
	buf := []byte("word,count\n")
	for _, r := range rs {
		buf = appendCSVField(buf, r.Key)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, r.Value, 10)
		buf = append(buf, '\n')
		if len(buf) > 1<<20 {
			if _, err := f.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	_, err := f.Write(buf)
	return err
}

// appendCSVField quotes a field that contains a comma, quote or newline, as
// RFC 4180 does.
func appendCSVField(b []byte, s string) []byte {
	quote := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ',' || c == '"' || c == '\n' || c == '\r' {
			quote = true
			break
		}
	}
	if !quote {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}
