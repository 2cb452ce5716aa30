package kafka_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/kafka"
)

// A cluster that takes SCRAM logins: the right credentials (given in the
// URI) read and write; wrong ones are a clear error, at once.
func TestSASL(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "ann", "secret"), kfake.SeedTopics(2, "in"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	good, topic, err := kafka.ParseURI("kafka://ann:secret@" + addr + "/in?sasl=scram-sha-256")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(scram.Auth{User: "ann", Pass: "secret"}.AsSha256Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce(t, cl, topic, -1, "a", "b", "c")
	job := weir.NewJob("sasl", weir.Workers(1))
	src := weir.Source(job, "in", kafka.Source(kafka.SourceConfig{Config: good, Topic: topic, Bounded: true}, kafka.Values(str)))
	col := &weir.Collect[string]{}
	weir.Sink(src, col)
	if err := job.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := col.Records(); len(got) != 3 {
		t.Errorf("read %v", got)
	}
	bad, _, _ := kafka.ParseURI("kafka://ann:wrong@" + addr + "/in?sasl=scram-sha-256")
	bad.Connect = time.Second
	err = kafka.Source(kafka.SourceConfig{Config: bad, Topic: "in"}, kafka.Values(str)).Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cannot reach the brokers "+addr) || !strings.Contains(err.Error(), "with SASL SCRAM-SHA-256: are the user and password right?") {
		t.Errorf("wrong password: %v", err)
	}
}

// An unbounded source finds partitions added to its topic while it runs
// and reads them from their first record; its lag counter is there.
func TestSourceFindsNewPartitions(t *testing.T) {
	cfg := cluster(t, "in:1")
	cl := client(t, cfg)
	produce(t, cl, "in", 0, "p0-a", "p0-b")
	in := kafka.Source(kafka.SourceConfig{Config: cfg, Topic: "in", Discover: 100 * time.Millisecond}, kafka.Values(str))
	job := weir.NewJob("grow", weir.Workers(2))
	src := weir.Source(job, "in", in, weir.Parallelism(2))
	col := &weir.Collect[string]{}
	weir.Sink(src, col)
	done := make(chan error, 1)
	go func() { done <- job.Run(context.Background()) }()
	time.Sleep(300 * time.Millisecond)
	if _, err := kadm.NewClient(cl).CreatePartitions(context.Background(), 2, "in"); err != nil {
		t.Fatal(err)
	}
	cl2 := client(t, cfg) // knows the new partitions
	produce(t, cl2, "in", 1, "p1-a")
	produce(t, cl2, "in", 2, "p2-a", "p2-b")
	want := []string{"p0-a", "p0-b", "p1-a", "p2-a", "p2-b"}
	deadline := time.Now().Add(20 * time.Second)
	for len(col.Records()) < len(want) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	job.Stop()
	if err := <-done; err != nil && !errors.Is(err, weir.ErrStopped) {
		t.Fatal(err)
	}
	recs := col.Records()
	slices.Sort(recs)
	if !slices.Equal(recs, want) {
		t.Errorf("read %v, want %v", recs, want)
	}
	if lag, ok := job.Metrics().Counters["kafka_lag"]; !ok || lag != 0 {
		t.Errorf("kafka_lag %d (%v), want 0 once everything is read", lag, ok)
	}
}

// A bounded source ends even when the last records before its end were
// an aborted transaction's, which a read_committed reader never sees:
// here the end is where an open transaction began, and the first record
// it sees past it, once that transaction commits, ends the partition.
func TestBoundedEndsAfterAbortedRecords(t *testing.T) {
	cfg := cluster(t, "in:1")
	produce(t, client(t, cfg), "in", 0, "x")
	a := client(t, cfg, kgo.TransactionalID("A"))
	b := client(t, cfg, kgo.TransactionalID("B"))
	ctx := context.Background()
	if err := b.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, b, "in", 0, "b1", "b2")
	if err := a.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, a, "in", 0, "a1")
	if err := b.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	job := weir.NewJob("ends", weir.Workers(1))
	col := &weir.Collect[string]{}
	weir.Sink(weir.Source(job, "in", kafka.Source(kafka.SourceConfig{Config: cfg, Topic: "in", Bounded: true}, kafka.Values(str))), col)
	done := make(chan error, 1)
	go func() { done <- job.Run(ctx) }()
	time.Sleep(500 * time.Millisecond)
	if err := a.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		job.Stop()
		t.Fatalf("the bounded job did not end; read %v", col.Records())
	}
	if got := col.Records(); !slices.Equal(got, []string{"x"}) {
		t.Errorf("read %v, want [x]", got)
	}
}
