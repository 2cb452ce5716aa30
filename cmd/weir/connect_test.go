package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	natsio "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weirstream/weir/internal/services"
)

// kafkaCluster starts an in-process Kafka cluster with topic in of parts
// partitions and returns its address.
func kafkaCluster(t *testing.T, in string, parts int32) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, in))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

// produceLines writes the lines to topic, round-robin over its
// partitions.
func produceLines(t *testing.T, addr, topic string, lines []string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, len(lines))
	for i, l := range lines {
		recs[i] = &kgo.Record{Topic: topic, Value: []byte(l)}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// consumeLines reads every committed record of topic, sorted.
func consumeLines(t *testing.T, addr, topic string) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []string
	for quiet := 0; quiet < 3; {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
		if fs.NumRecords() == 0 {
			quiet++
		}
	}
	slices.Sort(out)
	return out
}

// csvRows are the rows of a CSV with a header line, sorted.
func csvRows(csv string) []string {
	rows := strings.Split(strings.TrimSpace(csv), "\n")[1:]
	slices.Sort(rows)
	return rows
}

// YSB in its original form, Kafka to Kafka, over two processes with a
// checkpoint every second and three SIGKILLs: the results topic holds, for
// a read_committed reader, exactly the reference's windows, once each.
func TestChaosKafkaYSB(t *testing.T) {
	addr := kafkaCluster(t, "ad-events", 4)
	dir := t.TempDir()
	evs, camp := ysbInput(100_000, 31, 36_000)
	produceLines(t, addr, "ad-events", jsonLines(evs))
	campaigns := filepath.Join(dir, "campaigns.csv")
	writeCampaigns(t, campaigns, camp)
	log := chaosN(t, 2, 3, 1500*time.Millisecond, "run", "ysb", "--source", "kafka://"+addr+"/ad-events", "--bounded",
		"--campaigns", campaigns, "--sink", "kafka://"+addr+"/results", "--rate", "10000",
		"--workers", "1", "--interval", "100ms", "--checkpoint-dir", filepath.Join(dir, "ckpt"), "--checkpoint-interval", "1s")
	got, want := consumeLines(t, addr, "results"), csvRows(ysbCSV(t, evs, camp))
	if !slices.Equal(got, want) {
		t.Errorf("results topic: %d windows (%d distinct), want %d\n%s\n%s", len(got), len(slices.Compact(slices.Clone(got))), len(want), firstDiff(strings.Join(got, "\n"), strings.Join(want, "\n")), log)
	}
	if !strings.Contains(log, "restoring checkpoint") {
		t.Errorf("no run restored a checkpoint:\n%s", log)
	}
}

// NATS to PostgreSQL with checkpoints and three SIGKILLs: the table
// holds exactly the reference's windows.
func TestChaosNATSPostgresYSB(t *testing.T) {
	natsURL := services.Need(t, services.NATS)
	pgURL := services.Need(t, services.Postgres)
	dir := t.TempDir()
	evs, camp := ysbInput(80_000, 33, 36_000)
	stream := fmt.Sprintf("ysbevents%d", time.Now().UnixNano())
	js := publish(t, natsURL, stream, jsonLines(evs), jetstream.WorkQueuePolicy)
	table := "ysb_chaos_" + stream
	conn := pgConn(t, pgURL)
	t.Cleanup(func() {
		// The table, the sink's staging table and its fence row.
		conn.Exec(context.Background(), "drop table if exists "+table+", weir_stage_"+table)
		conn.Exec(context.Background(), "delete from weir_fence where sink = $1", table)
	})
	campaigns := filepath.Join(dir, "campaigns.csv")
	writeCampaigns(t, campaigns, camp)
	log := chaosN(t, 1, 3, 1500*time.Millisecond, "run", "ysb", "--source", natsURL+"/"+stream+"?consumer=ysb", "--bounded",
		"--campaigns", campaigns, "--sink", pgURL+"&table="+table, "--rate", "10000",
		"--workers", "2", "--interval", "100ms", "--checkpoint-dir", filepath.Join(dir, "ckpt"), "--checkpoint-interval", "1s")
	got := pgRows(t, conn, "select campaign_id||','||window_start||','||count from "+table)
	if want := csvRows(ysbCSV(t, evs, camp)); !slices.Equal(got, want) {
		t.Errorf("table: %d windows, want %d\n%s", len(got), len(want), log)
	}
	if !strings.Contains(log, "restoring checkpoint") {
		t.Errorf("no run restored a checkpoint:\n%s", log)
	}
	// A work queue: what the job acknowledged as its checkpoints
	// completed is gone (and it never took what a restart read again),
	// and the rest went at its end.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if s, err := js.Stream(ctx, stream); err != nil {
		t.Error(err)
	} else if info, err := s.Info(ctx); err != nil || info.State.Msgs != 0 {
		t.Errorf("the work queue holds %+v after the job (%v), want no message", info.State, err)
	}
}

// publish makes stream (subject = its name) with retention ret and
// publishes the lines.
func publish(t *testing.T, url, stream string, lines []string, ret jetstream.RetentionPolicy) jetstream.JetStream {
	t.Helper()
	nc, err := natsio.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{stream}, Retention: ret}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteStream(url, stream) })
	for i, l := range lines {
		if _, err := js.PublishAsync(stream, []byte(l)); err != nil {
			t.Fatal(err)
		}
		if i%10000 == 9999 {
			<-js.PublishAsyncComplete()
		}
	}
	<-js.PublishAsyncComplete()
	return js
}

func deleteStream(url, stream string) {
	nc, err := natsio.Connect(url)
	if err != nil {
		return
	}
	defer nc.Close()
	if js, err := jetstream.New(nc); err == nil {
		js.DeleteStream(context.Background(), stream)
	}
}

func pgConn(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func pgRows(t *testing.T, conn *pgx.Conn, query string) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// weir pipe from a topic, with a checkpoint every second and three
// SIGKILLs, into a file and into another topic: each holds every record
// once.
func TestChaosPipe(t *testing.T) {
	addr := kafkaCluster(t, "in", 3)
	var lines []string
	for i := range 60_000 {
		lines = append(lines, fmt.Sprintf("record %05d", i))
	}
	produceLines(t, addr, "in", lines)
	want := slices.Sorted(slices.Values(lines))
	for _, sink := range []string{"file", "kafka"} {
		t.Run(sink, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.txt")
			uri := "file://" + out
			if sink == "kafka" {
				uri = "kafka://" + addr + "/copy?txn=pipe-copy"
			}
			log := chaosN(t, 1, 3, 1500*time.Millisecond, "pipe", "--source", "kafka://"+addr+"/in", "--bounded", "--sink", uri, "--rate", "7000",
				"--workers", "2", "--interval", "100ms", "--checkpoint-dir", filepath.Join(dir, "ckpt"), "--checkpoint-interval", "1s")
			var got []string
			if sink == "kafka" {
				got = consumeLines(t, addr, "copy")
			} else {
				got = strings.Split(strings.TrimSpace(readFile(t, out)), "\n")
				slices.Sort(got)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s holds %d records (%d distinct), want %d once each\n%s", uri, len(got), len(slices.Compact(slices.Clone(got))), len(want), log)
			}
			if !strings.Contains(log, "restoring checkpoint") {
				t.Errorf("no run restored a checkpoint:\n%s", log)
			}
		})
	}
}
