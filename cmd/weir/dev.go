package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kfake"
)

func devCmd() *cobra.Command {
	dev := &cobra.Command{Use: "dev SERVER", Short: "Run a local server for trying Weir and for tests", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return fmt.Errorf("dev needs a server: %s", subNames(cmd))
		}}
	dev.AddCommand(devKafkaCmd())
	return dev
}

func devKafkaCmd() *cobra.Command {
	var (
		addr   string
		topics []string
		data   string
	)
	cmd := &cobra.Command{
		Use:   "kafka",
		Short: "Run an in-process Kafka broker (one node, transactions included) until interrupted",
		Long: `Runs a Kafka-compatible broker in this process, for trying Weir's Kafka
source and sink without a cluster: weir run ysb --source kafka://ADDR/ad-events.
Topics are made by --topic NAME:PARTITIONS, or by the sinks that create them.
Without --data everything is in memory and gone when it stops.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return fmt.Errorf("--addr %s: %v (want host:port)", addr, err)
			}
			p, err := strconv.Atoi(port)
			if err != nil || p < 0 || p > 65535 {
				return fmt.Errorf("--addr %s: bad port", addr)
			}
			opts := []kfake.Opt{kfake.NumBrokers(1), kfake.Ports(p), kfake.ListenFn(func(network, _ string) (net.Listener, error) {
				return net.Listen(network, net.JoinHostPort(host, strconv.Itoa(p)))
			})}
			for _, t := range topics {
				name, n, ok := strings.Cut(t, ":")
				parts, err := strconv.Atoi(n)
				if !ok || name == "" || err != nil || parts < 1 {
					return fmt.Errorf("--topic %s: want NAME:PARTITIONS, as ad-events:4", t)
				}
				opts = append(opts, kfake.SeedTopics(int32(parts), name))
			}
			if data != "" {
				if err := os.MkdirAll(data, 0o755); err != nil {
					return fmt.Errorf("--data %v", unwrapPath(err))
				}
				opts = append(opts, kfake.DataDir(data), kfake.SyncWrites())
			}
			c, err := kfake.NewCluster(opts...)
			if err != nil {
				return fmt.Errorf("kafka broker on %s: %v", addr, err)
			}
			defer c.Close()
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sig)
			fmt.Fprintf(os.Stderr, "weir dev kafka: a broker on %s (interrupt to stop)\n", strings.Join(c.ListenAddrs(), ","))
			<-sig
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:9092", "`HOST:PORT` to listen on")
	cmd.Flags().StringArrayVar(&topics, "topic", nil, "make topic `NAME:PARTITIONS` at start (repeatable)")
	cmd.Flags().StringVar(&data, "data", "", "keep the broker's data in `DIR` across runs (default: memory only)")
	return cmd
}
