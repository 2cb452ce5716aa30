package kafka_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weirstream/weir/connector/kafka"
)

// cluster starts an in-process Kafka cluster with the topics given as
// name:partitions.
func cluster(t *testing.T, topics ...string) kafka.Config {
	t.Helper()
	return clusterWith(t, nil, topics...)
}

// clusterWith is cluster with more options for the brokers.
func clusterWith(t *testing.T, opts []kfake.Opt, topics ...string) kafka.Config {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cfg := kafka.Config{Brokers: c.ListenAddrs()}
	cl := client(t, cfg)
	for _, tp := range topics {
		name, n, _ := strings.Cut(tp, ":")
		parts, _ := strconv.Atoi(n)
		req := fmt.Sprintf("%s:%d", name, parts)
		if err := createTopic(cl, name, int32(parts)); err != nil {
			t.Fatalf("creating %s: %v", req, err)
		}
	}
	return cfg
}

func client(t *testing.T, cfg kafka.Config, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produce writes the values to partition part of topic (part < 0: by
// the default partitioner).
func produce(t *testing.T, cl *kgo.Client, topic string, part int32, values ...string) {
	t.Helper()
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Topic: topic, Partition: part, Value: []byte(v)}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// readAll reads every committed record of topic, as values, sorted.
func readAll(t *testing.T, cfg kafka.Config, topic string) []string {
	t.Helper()
	cl := client(t, cfg, kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var out []string
	end := time.Now().Add(3 * time.Second)
	for time.Now().Before(end) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
		if fs.NumRecords() == 0 && len(out) > 0 {
			break
		}
	}
	slices.Sort(out)
	return out
}

// newestCheckpoint is the directory of the newest complete checkpoint in
// dir ("" if none).
func newestCheckpoint(dir string) string {
	var best string
	var n uint64
	done, _ := filepath.Glob(filepath.Join(dir, "chk-*", "MANIFEST"))
	for _, m := range done {
		d := filepath.Dir(m)
		v, err := strconv.ParseUint(strings.TrimPrefix(filepath.Base(d), "chk-"), 10, 64)
		if err == nil && v >= n {
			n, best = v, d
		}
	}
	return best
}

func createTopic(cl *kgo.Client, name string, parts int32) error {
	adm := kadm.NewClient(cl)
	_, err := adm.CreateTopic(context.Background(), parts, 1, nil, name)
	return err
}
