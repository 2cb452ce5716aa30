package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir/connector/gen"
)

func genYSBCmd() *cobra.Command {
	var (
		events    int64
		seed      uint64
		out       string
		campaigns string
	)
	cmd := &cobra.Command{
		Use:   "ysb",
		Short: "Write generated YSB events as JSON lines, and their ad_id,campaign_id table",
		Long: `Writes --events N events of the built-in YSB generator (the events weir run ysb
generates with the same --seed) to --out as JSON lines, and the ads'
campaigns to --campaigns as an ad_id,campaign_id CSV. weir ysb-setup loads
the same campaigns into Redis; weir pipe copies the events into a topic.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if events <= 0 || out == "" {
				return fmt.Errorf("gen ysb needs --events N (N > 0) and --out FILE")
			}
			var ps paths
			ps.output("--out", out, true)
			ps.output("--campaigns", campaigns, true)
			if err := ps.check(); err != nil {
				return err
			}
			evs, ads := gen.YSBEvents(int(events), seed)
			if err := writeNLines(out, len(evs), func(i int, b []byte) []byte { return evs[i].AppendJSON(b) }); err != nil {
				return err
			}
			if campaigns != "" {
				err := writeNLines(campaigns, len(ads)+1, func(i int, b []byte) []byte {
					if i == 0 {
						return append(b, "ad_id,campaign_id"...)
					}
					return append(append(append(b, ads[i-1].AdID...), ','), ads[i-1].CampaignID...)
				})
				if err != nil {
					return err
				}
			}
			fmt.Fprintf(os.Stderr, "gen ysb: %d events to %s, %d ads\n", len(evs), out, len(ads))
			return nil
		},
	}
	cmd.Flags().Int64Var(&events, "events", 0, "how many events")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the generated events and ads")
	cmd.Flags().StringVar(&out, "out", "", "JSON-lines events `FILE`")
	cmd.Flags().StringVar(&campaigns, "campaigns", "", "write the ad_id,campaign_id CSV to `FILE`")
	return cmd
}

// writeNLines writes n lines, line(i) each, to path.
func writeNLines(path string, n int, line func(i int, b []byte) []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%v", unwrapPath(err))
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var b []byte
	for i := range n {
		b = append(line(i, b[:0]), '\n')
		bw.Write(b)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %v", path, err)
	}
	return f.Close()
}
