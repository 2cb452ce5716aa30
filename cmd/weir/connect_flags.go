package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/jobs/wordcount"
)

// connectFlags are --source, --sink and --bounded of a run command.
type connectFlags struct {
	source, sink string
	bounded      bool
	src, dst     endpoint
}

func (c *connectFlags) register(fs *pflag.FlagSet, what, results string) {
	fs.StringVar(&c.source, "source", "", "read the "+what+" from `URI`: kafka://host:port/topic, nats://host:port/stream or file://path")
	fs.StringVar(&c.sink, "sink", "", "write the results to `URI`, "+results+": kafka://host:port/topic, nats://host:port/stream or file://path")
	fs.BoolVar(&c.bounded, "bounded", false, "with --source kafka:// or nats://, stop at the records that were the latest when the job started")
}

// resolve parses the URIs given; the command's own input and output
// flags (haveIn, haveOut) and these must give exactly one each (at most
// one output when outFlag is "": the command has a default output).
func (c *connectFlags) resolve(haveIn bool, inFlag string, haveOut bool, outFlag string, sinks ...string) error {
	switch {
	case haveIn && c.source != "":
		return fmt.Errorf("give %s or --source URI, not both", inFlag)
	case !haveIn && c.source == "":
		return fmt.Errorf("%s or --source URI is required", inFlag)
	case haveOut && c.sink != "":
		return fmt.Errorf("give %s or --sink URI, not both", outFlag)
	case !haveOut && c.sink == "" && outFlag != "":
		return fmt.Errorf("%s or --sink URI is required", outFlag)
	case c.bounded && c.source == "":
		return fmt.Errorf("--bounded needs --source URI")
	}
	var err error
	if c.source != "" {
		if c.src, err = parseEndpoint("--source", c.source, "kafka", "nats", "file"); err != nil {
			return err
		}
	}
	if c.sink != "" {
		if c.dst, err = parseEndpoint("--sink", c.sink, sinks...); err != nil {
			return err
		}
	}
	return nil
}

// paths adds the files the URIs name.
func (c *connectFlags) paths(ps *paths, leader bool) {
	if c.src.scheme == "file" {
		ps.input("--source", c.src.name)
	}
	if c.dst.scheme == "file" {
		ps.output("--sink", c.dst.name, leader)
	}
}

// runWordcountConnect is the word count from --source or to --sink: the
// source's lines (messages), each word's count at the end as a line
// word,count on the sink, or in --out sorted.
func runWordcountConnect(ctx context.Context, jf jobFlags, conn connectFlags, inputs []string, out string, rate float64, cost time.Duration) error {
	var ps paths
	conn.paths(&ps, jf.cluster.leader())
	if conn.source == "" {
		files, err := expandInputs(inputs)
		if err != nil {
			return err
		}
		if files[0] == stdinPath {
			return fmt.Errorf("--input -: give files, or --source URI")
		}
		conn.src = endpoint{flag: "--input", uri: files[0], scheme: "file", name: files[0]}
		if len(files) > 1 {
			return fmt.Errorf("--input: with --sink, give one file (or --source URI)")
		}
		ps.input("--input", files...)
	}
	ps.output("--out", out, jf.cluster.leader())
	ps.jobDirs(&jf)
	if err := ps.check(); err != nil {
		return err
	}
	in, err := lineSource(conn.src, conn.bounded, nil, func(s string) (string, error) { return s, nil }, nil)
	if err != nil {
		return err
	}
	if err := checkNow(ctx, in); err != nil {
		return err
	}
	if rate > 0 {
		in = weir.Paced(in, rate)
	}
	col := &weir.Collect[wordcount.Result]{}
	var sink weir.Output[wordcount.Result] = col
	if out == "" {
		if sink, err = lineSink(conn.dst, appendWordLine, false); err != nil {
			return err
		}
		if err := checkNow(ctx, sink); err != nil {
			return err
		}
	}
	job := weir.NewJob("wordcount", jf.options()...)
	weir.Sink(wordcount.CostedQuery(weir.Source(job, "lines", in), cost), sink, weir.Name("results"))
	start := time.Now()
	if err := jf.observe.run(ctx, job); err != nil {
		return stoppedRun(err, "wordcount", job.Metrics(), jf, "the results")
	}
	if !jf.cluster.leader() {
		return nil
	}
	where := conn.sink
	if out != "" {
		where = out
		if err := writeWordcountOut(out, col.Records()); err != nil {
			return err
		}
	}
	m := job.Metrics()
	fmt.Fprintf(os.Stderr, "wordcount: %d non-empty lines%s in %.2fs, results to %s\n", m.Records, readSince(m, jf), time.Since(start).Seconds(), where)
	return nil
}

// appendWordLine appends word,count (the word quoted as CSV needs).
func appendWordLine(r wordcount.Result, b []byte) []byte {
	return strconv.AppendInt(append(appendCSVField(b, r.Key), ','), r.Value, 10)
}
