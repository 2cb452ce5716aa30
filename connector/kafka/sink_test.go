package kafka_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/kafka"
)

func value(s string) (key, value []byte) { return nil, []byte(s) }

// fill writes n records r00000... over the partitions of topic in and
// returns them sorted.
func fill(t *testing.T, cfg kafka.Config, n, parts int) []string {
	cl := client(t, cfg)
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("r%05d", i))
	}
	for p := range parts {
		var vs []string
		for i := p; i < n; i += parts {
			vs = append(vs, want[i])
		}
		produce(t, cl, "in", int32(p), vs...)
	}
	return want
}

// Topic to topic with checkpoints, crashing twice: the output topic holds
// each record once for a read_committed reader.
func TestSinkExactlyOnceThroughCrashes(t *testing.T) {
	cfg := cluster(t, "in:3")
	want := fill(t, cfg, 60000, 3)
	ckpt := t.TempDir()
	sinkCfg := kafka.SinkConfig{Config: cfg, Topic: "out", Create: true, Partitions: 2}
	run := func(crashAt int64) error {
		job := weir.NewJob("copy", weir.Workers(2), weir.EpochRecords(500), weir.Checkpoints(ckpt, 1, 100))
		src := weir.Source(job, "in", kafka.Source(kafka.SourceConfig{Config: cfg, Topic: "in", Bounded: true}, kafka.Values(str)), weir.Parallelism(3))
		// Crash at record crashAt, or later once a checkpoint is
		// complete.
		var seen atomic.Int64
		src = weir.Map(src, func(s string) string {
			if n := seen.Add(1); crashAt > 0 && n >= crashAt && n%100 == 0 && newestCheckpoint(ckpt) != "" {
				panic("crash")
			}
			return s
		}, weir.Stateless(), weir.Name("crash"))
		weir.Sink(src, kafka.Sink(sinkCfg, value), weir.Name("out"))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return job.Run(ctx)
	}
	if err := run(12000); err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("the first run did not crash: %v", err)
	}
	mid := readAll(t, cfg, "out")
	t.Logf("after the first crash: checkpoint %s, %d records visible", newestCheckpoint(ckpt), len(mid))
	if err := run(40000); err == nil {
		t.Fatal("the second run did not crash")
	}
	if err := run(-1); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, cfg, "out")
	if !slices.Equal(got, want) {
		t.Errorf("out holds %d records (%d distinct), want %d once each", len(got), len(slices.Compact(slices.Clone(got))), len(want))
	}
	if len(mid) == 0 || len(mid) >= len(want) {
		t.Errorf("after the first crash out held %d records; want some, committed by checkpoints, and not all", len(mid))
	}
}

// A crash between a checkpoint's completion and its commit: the restarted
// sink commits the sealed transaction from the checkpoint's note, once,
// and aborts what was written after it.
func TestSinkCommitsFromNote(t *testing.T) {
	cfg := cluster(t, "out:1")
	sc := kafka.SinkConfig{Config: cfg, Topic: "out"}
	first := kafka.Sink(sc, value)
	if err := first.Recover(0); err != nil {
		t.Fatal(err)
	}
	first.Write([]string{"a", "b"})
	note, err := first.Prepare(1)
	if err != nil || len(note) == 0 {
		t.Fatalf("Prepare: %q %v", note, err)
	}
	first.Write([]string{"after"}) // in the next transaction, never committed
	if _, err := first.Prepare(2); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, cfg, "out"); len(got) != 0 {
		t.Fatalf("visible before any commit: %v", got)
	}
	// The process dies here; a new one restores checkpoint 1.
	second := kafka.Sink(sc, value)
	if err := second.Commit(1, note); err != nil {
		t.Fatal(err)
	}
	if err := second.Recover(1); err != nil {
		t.Fatal(err)
	}
	second.Write([]string{"c"})
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, cfg, "out"); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("out holds %v, want a b c", got)
	}
	// A third restart from checkpoint 1 commits nothing twice.
	third := kafka.Sink(sc, value)
	if err := third.Commit(1, note); err != nil {
		t.Errorf("committing checkpoint 1 again: %v", err)
	}
	if err := third.Recover(1); err != nil {
		t.Fatal(err)
	}
	third.Close()
	if got := readAll(t, cfg, "out"); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("after a second restart out holds %v, want a b c", got)
	}
}

// A sealed transaction that times out before its commit is reported as
// lost when the job restarts.
func TestSinkReportsTimedOutTransaction(t *testing.T) {
	for name, opts := range brokers {
		t.Run(name, func(t *testing.T) {
			cfg := clusterWith(t, opts, "out:1")
			sc := kafka.SinkConfig{Config: cfg, Topic: "out", TransactionTimeout: time.Second}
			first := kafka.Sink(sc, value)
			if err := first.Recover(0); err != nil {
				t.Fatal(err)
			}
			first.Write([]string{"a"})
			note, err := first.Prepare(1)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(2500 * time.Millisecond)
			err = kafka.Sink(sc, value).Commit(1, note)
			if err == nil || !strings.Contains(err.Error(), "could not be committed") || !strings.Contains(err.Error(), "so its records are lost") {
				t.Errorf("commit after the timeout: %v", err)
			}
		})
	}
}

// Without checkpoints the sink writes everything, flushed at each epoch,
// also as several instances (the first to end does not close the client
// under the others); a missing topic is an error unless Create is set.
func TestSinkPlain(t *testing.T) {
	cfg := cluster(t, "in:4")
	want := fill(t, cfg, 20_000, 4)
	job := weir.NewJob("plain", weir.Workers(4))
	src := weir.Source(job, "in", kafka.Source(kafka.SourceConfig{Config: cfg, Topic: "in", Bounded: true}, kafka.Values(str)), weir.Parallelism(4))
	weir.Sink(src, kafka.Sink(kafka.SinkConfig{Config: cfg, Topic: "out", Create: true}, value), weir.Name("one"), weir.Parallelism(1))
	weir.Sink(src, kafka.Sink(kafka.SinkConfig{Config: cfg, Topic: "out4", Create: true}, value), weir.Name("four"), weir.Parallelism(4))
	if err := job.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"out", "out4"} {
		if got := readAll(t, cfg, topic); !slices.Equal(got, want) {
			t.Errorf("%s holds %d records, want %d", topic, len(got), len(want))
		}
	}
	err := kafka.Sink(kafka.SinkConfig{Config: cfg, Topic: "missing"}, value).Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "topic missing does not exist") {
		t.Errorf("missing topic: %v", err)
	}
}
