package main

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
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
		runs    int
		compare bool
	)
	cmd := &cobra.Command{
		Use:   "transport",
		Short: "Records and bytes per second from process 0 to process 1; run it with weir launch -n 2",
		Long: `Process 0 encodes --records records (24-byte fission.Record values) in
batches of --batch with the record codec and sends them on one channel to
process 1, which decodes them; process 1 then answers, and process 0
prints one JSON object: records/s and bytes/s (frame headers included),
timed from the first send to the answer, the medians of --runs runs
(each over a new mesh). With --tls-cert, --tls-key and --tls-ca the mesh
is mutual TLS; --compare then alternates runs without and with TLS and
reports both and their ratio.

  weir launch -n 2 -- bench transport --records 50000000
  weir launch -n 2 -- bench transport --runs 3 --compare --tls-cert p.crt --tls-key p.key --tls-ca ca.crt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cf.resolve(); err != nil {
				return err
			}
			c := cf.resolved
			if c.Processes() != 2 {
				return fmt.Errorf("bench transport runs as 2 processes (weir launch -n 2), not %d", c.Processes())
			}
			if compare && cf.tls == nil {
				return fmt.Errorf("--compare needs --tls-cert, --tls-key and --tls-ca")
			}
			modes := map[bool][]*tls.Config{false: {cf.tls}, true: {nil, cf.tls}}[compare]
			var times [2][]float64 // seconds by mode
			var bytes int64
			for run := range max(1, runs) {
				for m, tc := range modes {
					cfg := transport.Config{Self: c.Self, Addrs: c.Peers, Secret: cf.secret, TLS: tc,
						DialTimeout: cf.meshTimeout, Logger: slog.Default(),
						Settings: []transport.Setting{{Name: "job", Value: "bench transport"}, {Name: "run", Value: strconv.Itoa(run)},
							{Name: "--tls", Value: strconv.FormatBool(tc != nil)}, {Name: "--records", Value: strconv.Itoa(records)},
							{Name: "--batch", Value: strconv.Itoa(batch)}}}
					secs, b, err := transportRun(cmd, cfg, records, batch)
					if err != nil {
						return err
					}
					times[m], bytes = append(times[m], secs), b
				}
			}
			if c.Self != 0 {
				return nil
			}
			out := map[string]any{"job": "transport", "records": records, "batch": batch, "runs": max(1, runs),
				"bytes_per_record": float64(bytes) / float64(records)}
			figures := func(secs []float64) map[string]any {
				s := median(secs)
				return map[string]any{"seconds": s, "records_per_s": float64(records) / s, "bytes_per_s": float64(bytes) / s}
			}
			if compare {
				plain, tls := figures(times[0]), figures(times[1])
				out["plain"], out["tls"] = plain, tls
				out["tls_ratio"] = tls["records_per_s"].(float64) / plain["records_per_s"].(float64)
			} else {
				for k, v := range figures(times[0]) {
					out[k] = v
				}
				out["tls"] = cf.tls != nil
			}
			return json.NewEncoder(os.Stdout).Encode(out)
		},
	}
	cf.register(cmd.Flags())
	cmd.Flags().IntVar(&records, "records", 20_000_000, "records to send")
	cmd.Flags().IntVar(&batch, "batch", 1024, "records per message")
	cmd.Flags().IntVar(&runs, "runs", 1, "runs to take the median of (per mode with --compare)")
	cmd.Flags().BoolVar(&compare, "compare", false, "with the --tls-* flags, alternate runs without and with TLS and report both")
	return cmd
}

// transportRun runs one transfer over a new mesh. Process 0 returns the
// seconds it took and the bytes it sent.
func transportRun(cmd *cobra.Command, cfg transport.Config, records, batch int) (float64, int64, error) {
	net, err := transport.Dial(cmd.Context(), cfg)
	if err != nil {
		return 0, 0, err
	}
	defer net.Close()
	rc, err := codec.For[fission.Record]()
	if err != nil {
		return 0, 0, err
	}
	if cfg.Self == 1 {
		return 0, 0, receiveBench(net, rc, records)
	}
	recs := fission.Generate(batch, 1000)
	s, ack := net.Sender(1, 1), net.Receiver(2, 1)
	var bytes int64
	t0 := time.Now()
	for sent := 0; sent < records; sent += batch {
		n := min(batch, records-sent)
		buf := rc.Append(s.Buffer(), recs[:n])
		bytes += int64(len(buf) + transport.HeaderSize)
		if err := s.Send(buf); err != nil {
			return 0, 0, err
		}
	}
	if _, err := ack.Recv(); err != nil {
		return 0, 0, err
	}
	ack.Release()
	return time.Since(t0).Seconds(), bytes, net.Close()
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
	if err := s.Send(append(s.Buffer(), 1)); err != nil {
		return err
	}
	return net.Close()
}
