package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir/internal/codec"
	"github.com/weirstream/weir/internal/transport"
	"github.com/weirstream/weir/jobs/fission"
)

func benchTransportCmd() *cobra.Command {
	var (
		cf      clusterFlags
		records int
		batch   int
	)
	cmd := &cobra.Command{
		Use:   "transport",
		Short: "Records and bytes per second from process 0 to process 1; run it with weir launch -n 2",
		Long: `Process 0 encodes --records records (24-byte fission.Record values) in
batches of --batch with the record codec and sends them on one channel to
process 1, which decodes them; process 1 then answers, and process 0
prints one JSON object: records/s and bytes/s (frame headers included),
timed from the first send to the answer.

  weir launch -n 2 -- bench transport --records 50000000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cf.resolve(); err != nil {
				return err
			}
			c := cf.resolved
			if c.Processes() != 2 {
				return fmt.Errorf("bench transport runs as 2 processes (weir launch -n 2), not %d", c.Processes())
			}
			net, err := transport.Dial(cmd.Context(), transport.Config{Self: c.Self, Addrs: c.Peers, Fingerprint: "bench-transport", Secret: cf.secret, Logger: slog.Default()})
			if err != nil {
				return err
			}
			defer net.Close()
			rc, err := codec.For[fission.Record]()
			if err != nil {
				return err
			}
			recs := fission.Generate(batch, 1000)
			if c.Self == 1 {
				return receiveBench(net, rc, records)
			}
			s, ack := net.Sender(1, 1), net.Receiver(2, 1)
			var bytes int64
			t0 := time.Now()
			for sent := 0; sent < records; sent += batch {
				n := min(batch, records-sent)
				buf := rc.Append(s.Buffer(), recs[:n])
				bytes += int64(len(buf) + transport.HeaderSize)
				if err := s.Send(buf); err != nil {
					return err
				}
			}
			if _, err := ack.Recv(); err != nil {
				return err
			}
			ack.Release()
			secs := time.Since(t0).Seconds()
			return json.NewEncoder(os.Stdout).Encode(map[string]any{
				"job": "transport", "records": records, "batch": batch, "seconds": secs,
				"records_per_s": float64(records) / secs, "bytes_per_s": float64(bytes) / secs,
				"bytes_per_record": float64(bytes) / float64(records),
			})
		},
	}
	cf.register(cmd.Flags())
	cmd.Flags().IntVar(&records, "records", 20_000_000, "records to send")
	cmd.Flags().IntVar(&batch, "batch", 1024, "records per message")
	return cmd
}

// receiveBench decodes what process 0 sends, then answers.
func receiveBench(net transport.Network, rc codec.Codec[fission.Record], records int) error {
	r := net.Receiver(1, 0)
	var got int
	var vs []fission.Record
	for got < records {
		buf, err := r.Recv()
		if err != nil {
			return err
		}
		if vs, err = rc.Decode(buf, vs[:0]); err != nil {
			return err
		}
		r.Release()
		got += len(vs)
	}
	s := net.Sender(2, 0)
	return s.Send(append(s.Buffer(), 1))
}
