package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/jobs/fission"
)

func benchFissionCmd() *cobra.Command {
	var (
		jf      jobFlags
		records int
		users   int
		rounds  int
		runs    int
		keyed   bool
	)
	cmd := &cobra.Command{
		Use:   "fission",
		Short: "The CPU-heavy fission pipeline at 1 and --workers workers, unordered and ordered; prints one JSON object",
		Long: `Generates --records records in memory (not timed), then runs the fission
pipeline (a scoring map doing --rounds rounds of mixing per record, a filter,
and with --keyed a running total per user) in four configurations,
interleaved, --runs times each: 1 worker and --workers workers, each without
and with weir.Ordered. GOMAXPROCS follows the worker count, so "1 worker"
means one core. It reports the median records/s of each, the speedup of
--workers over 1 (unordered) and the cost of ordering at --workers
(1 - ordered/unordered). Every run is checked against a plain loop.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := jf.cluster.single("bench fission"); err != nil {
				return err
			}
			if records <= 0 || rounds < 0 {
				return fmt.Errorf("--records must be positive and --rounds not negative")
			}
			recs := fission.Generate(records, users)
			cfg := fission.Config{Rounds: rounds, Keyed: keyed}
			want := fission.Reference(recs, cfg)
			type config struct {
				name    string
				workers int
				ordered bool
			}
			configs := []config{{"w1", 1, false}, {"w1_ordered", 1, true}, {"wn", jf.workers, false}, {"wn_ordered", jf.workers, true}}
			secs := map[string][]float64{}
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
			for r := 0; r < max(1, runs); r++ {
				for _, c := range configs {
					runtime.GOMAXPROCS(c.workers)
					jf := jf
					jf.workers, jf.ordered = c.workers, false
					opts := jf.options()
					if c.ordered {
						opts = append(opts, weir.Ordered())
					}
					job := weir.NewJob("fission", opts...)
					sum := &fission.Checksum{}
					weir.Sink(fission.Query(weir.Source(job, "records", weir.SliceSource[fission.Record]{Records: recs}), cfg), sum, weir.Name("checksum"))
					runtime.GC()
					t0 := time.Now()
					if err := jf.observe.run(cmd.Context(), job); err != nil {
						return err
					}
					secs[c.name] = append(secs[c.name], time.Since(t0).Seconds())
					ok := sum.Records == want.Records && (sum.Unordered == want.Unordered || keyed)
					if c.ordered {
						ok = sum.Records == want.Records && sum.Ordered == want.Ordered
					}
					if !ok {
						return fmt.Errorf("%s: output (%d records) disagrees with the plain loop (%d records)", c.name, sum.Records, want.Records)
					}
				}
			}
			rate := func(name string) float64 { return float64(records) / median(secs[name]) }
			out := map[string]any{
				"job":                      "fission",
				"records":                  records,
				"rounds":                   rounds,
				"keyed":                    keyed,
				"workers":                  jf.workers,
				"runs":                     max(1, runs),
				"w1_records_per_s":         rate("w1"),
				"w1_ordered_records_per_s": rate("w1_ordered"),
				"wn_records_per_s":         rate("wn"),
				"wn_ordered_records_per_s": rate("wn_ordered"),
				"speedup":                  rate("wn") / rate("w1"),
				"ordered_cost":             1 - rate("wn_ordered")/rate("wn"),
				"checked":                  true,
			}
			return json.NewEncoder(os.Stdout).Encode(out)
		},
	}
	jf.register(cmd.Flags())
	cmd.Flags().Lookup("workers").DefValue = "2"
	jf.workers = 2
	cmd.Flags().IntVar(&records, "records", 2_000_000, "number of records")
	cmd.Flags().IntVar(&users, "users", 1000, "number of distinct users")
	cmd.Flags().IntVar(&rounds, "rounds", 500, "mixing rounds per record in the scoring map (its CPU cost)")
	cmd.Flags().IntVar(&runs, "runs", 3, "timed runs of each configuration; medians are reported")
	cmd.Flags().BoolVar(&keyed, "keyed", false, "add the running total per user (a keyed region)")
	return cmd
}
