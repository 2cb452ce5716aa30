package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/ysb"
	"github.com/weirstream/weir/jobs/ysbjson"
)

func benchYSBJSONCmd() *cobra.Command {
	var (
		jf     jobFlags
		events int
		runs   int
		procs  int
		dir    string
		prof   string
	)
	cmd := &cobra.Command{
		Use:   "ysb-json",
		Short: "YSB from a JSON-lines file against a hand-written single-threaded parser; prints one JSON object",
		Long: `Writes --events YSB events as JSON lines to a temporary file (not timed),
then, --runs times, interleaved: (a) the baseline reads the file and runs a
hand-written single-threaded parser (no reflection) plus the YSB loop over
it; (b) the engine runs the file job (parallel file splits, the fuzzed
decoder, the YSB query). Reports the medians and the engine's events/s per
worker relative to the baseline.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := jf.cluster.single("bench ysb-json"); err != nil {
				return err
			}
			if procs <= 0 {
				procs = jf.workers
			}
			runtime.GOMAXPROCS(procs)
			evs, ads := gen.YSBEvents(events, 1)
			camp := ysb.FromAds(ads)
			want := ysb.Reference(evs, camp)
			tmp, err := os.MkdirTemp(dir, "weir-bench-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			path := filepath.Join(tmp, "events.jsonl")
			if err := writeEvents(path, evs); err != nil {
				return err
			}
			evs = nil
			runtime.GC()
			st, err := os.Stat(path)
			if err != nil {
				return err
			}
			// The baseline reads the file into a buffer allocated once:
			// reading is part of the work, allocating is not.
			buf := make([]byte, st.Size())
			var engine, loop []float64
			stopProfile, err := startCPUProfile(prof)
			if err != nil {
				return err
			}
			defer stopProfile()
			for r := 0; r < max(1, runs); r++ {
				t0 := time.Now()
				data, err := readInto(path, buf)
				if err != nil {
					return err
				}
				b := ysb.NewBaseline(camp)
				batch := make([]gen.YSBEvent, 0, 1024)
				err = ysbjson.Baseline(data, func(e *gen.YSBEvent) {
					batch = append(batch, *e)
					if len(batch) == cap(batch) {
						b.Run(batch)
						batch = batch[:0]
					}
				})
				b.Run(batch)
				loop = append(loop, time.Since(t0).Seconds())
				if err != nil {
					return err
				}
				if !slices.Equal(b.Results(), want) {
					return fmt.Errorf("baseline disagrees with the reference")
				}
				data = nil
				runtime.GC()
				t0 = time.Now()
				run, err := ysb.RunFile(cmd.Context(), ysb.FileConfig{Events: []string{path}, Campaigns: camp,
					Workers: jf.workers, MaxDelay: 5 * time.Second, Options: jf.options(), Observe: jf.observe.start})
				if err != nil {
					return err
				}
				engine = append(engine, time.Since(t0).Seconds())
				if !slices.Equal(run.Results, want) {
					return fmt.Errorf("engine output disagrees with the reference")
				}
				runtime.GC()
			}
			secs, bsecs := median(engine), median(loop)
			out := map[string]any{
				"job": "ysb-json", "events": events, "workers": jf.workers, "gomaxprocs": procs, "runs": len(engine),
				"seconds": secs, "events_per_s": float64(events) / secs,
				"baseline_events_per_s":        float64(events) / bsecs,
				"per_worker_ratio_to_baseline": bsecs / secs / float64(jf.workers),
				"checked":                      true,
			}
			return json.NewEncoder(os.Stdout).Encode(out)
		},
	}
	jf.register(cmd.Flags())
	cmd.Flags().IntVar(&events, "events", 2_000_000, "number of events")
	cmd.Flags().IntVar(&runs, "runs", 3, "timed runs; the median is reported")
	cmd.Flags().IntVar(&procs, "procs", 0, "GOMAXPROCS (default: --workers)")
	cmd.Flags().StringVar(&prof, "cpuprofile", "", "write a CPU profile of the runs to `FILE`")
	cmd.Flags().StringVar(&dir, "dir", "", "directory for the temporary events file (default: the system's)")
	return cmd
}

func writeEvents(path string, evs []gen.YSBEvent) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var buf []byte
	for i := range evs {
		buf = evs[i].AppendJSON(buf[:0])
		buf = append(buf, '\n')
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readInto(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	return buf[:n], nil
}
