package main

import (
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/spf13/pflag"
	"github.com/weirstream/weir"
)

// jobFlags are the flags every job takes.
type jobFlags struct {
	workers      int
	interval     time.Duration
	epochRecords int
	keyGroups    int
}

func (f *jobFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "parallelism of every operator")
	fs.DurationVar(&f.interval, "interval", time.Second, "epoch (batch) interval")
	fs.IntVar(&f.epochRecords, "epoch-records", 0, "cut epochs every N records per source instance instead of by time")
	fs.IntVar(&f.keyGroups, "key-groups", 128, "number of key groups")
}

func (f *jobFlags) options() []weir.JobOption {
	if f.workers < 1 {
		f.workers = 1
	}
	opts := []weir.JobOption{weir.Workers(f.workers), weir.BatchInterval(f.interval), weir.KeyGroups(f.keyGroups)}
	if f.epochRecords > 0 {
		opts = append(opts, weir.EpochRecords(f.epochRecords))
	}
	return opts
}

// createOut opens an output file, reporting a one-line error.
func createOut(path string) (*os.File, error) {
	if path == "" {
		return nil, fmt.Errorf("--out is required")
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// checkFiles reports the first input file that cannot be read.
func checkFiles(paths []string) error {
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if st.IsDir() {
			return fmt.Errorf("%s is a directory", p)
		}
	}
	return nil
}
