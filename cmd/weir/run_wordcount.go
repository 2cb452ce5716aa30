package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
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
		cost   time.Duration
		conn   connectFlags
	)
	cmd := &cobra.Command{
		Use:   "wordcount",
		Short: "Count the words (strings.Fields) of text files",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, release := jobSignals(cmd.Context(), &jf)
			defer release()
			if err := conn.resolve(len(inputs) > 0, "--input", out != "", "--out", "kafka", "nats", "file"); err != nil {
				return err
			}
			if err := checkRate(cmd, rate); err != nil {
				return err
			}
			if cost < 0 || cost > time.Second {
				return fmt.Errorf("--cost %v: want 0 to 1s a word", cost)
			}
			if conn.source != "" || conn.sink != "" {
				return runWordcountConnect(ctx, jf, conn, inputs, out, rate, cost)
			}
			files, err := expandInputs(inputs)
			if err != nil {
				return err
			}
			var ps paths
			if files[0] == stdinPath {
				if err := stdinAlone(jf); err != nil {
					return err
				}
			} else {
				ps.input("--input", files...)
			}
			ps.output("--out", out, jf.cluster.leader())
			ps.jobDirs(&jf)
			if err := ps.check(); err != nil {
				return err
			}
			return runWordcount(ctx, jf, files, out, stats, rate, cost)
		},
	}
	jf.register(cmd.Flags())
	cmd.Flags().StringSliceVar(&inputs, "input", nil, "text `FILE`s to count: files, directories (every file under them), patterns such as 'data/*.txt', @LIST (a file of paths, one per line) or - (standard input); repeat or comma-separate")
	cmd.Flags().StringVar(&out, "out", "", "output CSV `FILE` (word,count)")
	cmd.Flags().Float64Var(&rate, "rate", 0, "replay the lines at this many per second (0: as fast as possible)")
	cmd.Flags().DurationVar(&cost, "cost", 0, "make the count take this long (a sleep) for every word, as DS2's word count does: a job whose count needs a known number of instances (with --autoscale, --partitioning hash)")
	conn.register(cmd.Flags(), "lines", "a line word,count per word at the end")
	cmd.Flags().BoolVar(&stats, "stats", false, "at the end, print the partitioning figures of the count on stderr as one JSON object")
	return cmd
}

// stdinAlone refuses standard input where it cannot work: it cannot be
// read again after a restart, and one process alone can read it.
func stdinAlone(jf jobFlags) error {
	if jf.ckptDir != "" || jf.fromCkpt != "" {
		return fmt.Errorf("--input -: standard input cannot be read again after a restart, so a job reading it cannot take checkpoints; drop --checkpoint-dir or give files")
	}
	if n := jf.cluster.resolved.Processes(); n > 1 {
		return fmt.Errorf("--input -: standard input is read by one process, and this job has %d; give files", n)
	}
	return nil
}

func runWordcount(ctx context.Context, jf jobFlags, inputs []string, out string, stats bool, rate float64, cost time.Duration) error {
	job := weir.NewJob("wordcount", jf.options()...)
	col := &weir.Collect[wordcount.Result]{}
	in := file.Lines(inputs, file.Options{})
	if inputs[0] == stdinPath {
		in = file.LinesFrom("stdin", os.Stdin, file.Options{})
	}
	if rate > 0 {
		in = weir.Paced(in, rate)
	}
	lines := weir.Source(job, "lines", in)
	weir.Sink(wordcount.CostedQuery(lines, cost), col, weir.Name("collect"))
	start := time.Now()
	if err := jf.observe.run(ctx, job); err != nil {
		return stoppedRun(err, "wordcount", job.Metrics(), jf, out)
	}
	if !jf.cluster.leader() {
		return nil // process 0 writes the output
	}
	res := col.Records()
	if err := writeWordcountOut(out, res); err != nil {
		return err
	}
	m := job.Metrics()
	fmt.Fprintf(os.Stderr, "wordcount: %d non-empty lines%s, %d distinct words in %.2fs, written to %s\n",
		m.Records, readSince(m, jf), len(res), time.Since(start).Seconds(), out)
	if stats {
		return json.NewEncoder(os.Stderr).Encode(partitionFigures(job, jf.partitioning.name))
	}
	return nil
}

// writeWordcountOut sorts the counts and writes them to out as CSV.
func writeWordcountOut(out string, res []wordcount.Result) error {
	wordcount.Sort(res)
	f, err := createOut(out)
	if err != nil {
		return err
	}
	if err := writeWordCounts(f, res); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
