package kafka_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/connector/kafka"
)

func str(b []byte) (string, error) { return string(b), nil }

// A bounded source reads every committed record of every partition once,
// over any number of instances, and skips aborted ones.
func TestSourceBoundedReadsCommitted(t *testing.T) {
	cfg := cluster(t, "in:5")
	cl := client(t, cfg)
	var want []string
	for p := range int32(5) {
		var vs []string
		for i := range 200 + int(p)*37 {
			vs = append(vs, fmt.Sprintf("p%d-%d", p, i))
		}
		produce(t, cl, "in", p, vs...)
		want = append(want, vs...)
	}
	// A committed and an aborted transaction on partition 0.
	tx := client(t, cfg, kgo.TransactionalID("t1"))
	for _, commit := range []bool{true, false} {
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		produce(t, tx, "in", 0, fmt.Sprintf("tx-%v-a", commit), fmt.Sprintf("tx-%v-b", commit))
		if err := tx.EndTransaction(context.Background(), kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
		if commit {
			want = append(want, "tx-true-a", "tx-true-b")
		}
	}
	slices.Sort(want)
	for _, par := range []int{1, 2, 3, 7} {
		job := weir.NewJob("bounded", weir.Workers(2))
		src := weir.Source(job, "in", kafka.Source(kafka.SourceConfig{Config: cfg, Topic: "in", Bounded: true}, kafka.Values(str)), weir.Parallelism(par))
		col := &weir.Collect[string]{}
		weir.Sink(src, col)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := job.Run(ctx); err != nil {
			t.Fatalf("parallelism %d: %v", par, err)
		}
		cancel()
		got := col.Records()
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("parallelism %d: read %d records, want %d", par, len(got), len(want))
		}
	}
}

// A job with checkpoints that crashes and is restored, with the same or
// another number of source instances, reads each record once.
func TestSourceRestoresExactlyOnce(t *testing.T) {
	for _, restorePar := range []int{3, 2, 5} {
		t.Run(fmt.Sprint(restorePar), func(t *testing.T) {
			cfg := cluster(t, "in:4")
			cl := client(t, cfg)
			var want []string
			for i := range 40000 {
				want = append(want, fmt.Sprintf("r%05d", i))
			}
			for p := range int32(4) {
				var vs []string
				for i := int(p); i < len(want); i += 4 {
					vs = append(vs, want[i])
				}
				produce(t, cl, "in", p, vs...)
			}
			ckpt := t.TempDir()
			run := func(par int, crashAt int64, from string) (*weir.Collect[string], error) {
				opts := []weir.JobOption{weir.Workers(2), weir.EpochRecords(500), weir.Checkpoints(ckpt, 1, 100)}
				if from != "" {
					opts = append(opts, weir.FromCheckpoint(from))
				}
				job := weir.NewJob("restore", opts...)
				src := weir.Source(job, "in", kafka.Source(kafka.SourceConfig{Config: cfg, Topic: "in", Bounded: true}, kafka.Values(str)), weir.Parallelism(par))
				var seen atomic.Int64
				src = weir.Map(src, func(s string) string {
					if seen.Add(1) == crashAt {
						panic("crash")
					}
					return s
				}, weir.Stateless(), weir.Name("crash"))
				col := &weir.Collect[string]{}
				weir.Sink(src, col)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				return col, job.Run(ctx)
			}
			if _, err := run(3, 30000, ""); err == nil {
				t.Fatal("the first run did not crash")
			}
			chk := newestCheckpoint(ckpt)
			if chk == "" {
				t.Fatal("no checkpoint before the crash")
			}
			col, err := run(restorePar, -1, chk)
			if err != nil {
				t.Fatal(err)
			}
			got := col.Records()
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("restored from %s with %d instances: %d records (%d distinct), want %d", chk, restorePar, len(got), len(slices.Compact(slices.Clone(got))), len(want))
			}
		})
	}
}

// Records the decoder rejects go to the dead-letter output with their
// topic, partition and offset; without one, the error names them.
func TestSourceDeadLetters(t *testing.T) {
	cfg := cluster(t, "in:2")
	cl := client(t, cfg)
	produce(t, cl, "in", 0, "1", "2", "x", "4")
	produce(t, cl, "in", 1, "5", "y", "7")
	num := func(b []byte) (int, error) {
		var v int
		_, err := fmt.Sscan(string(b), &v)
		return v, err
	}
	var buf strings.Builder
	dl := file.NewDeadLetter(&buf)
	job := weir.NewJob("dl", weir.Workers(1))
	src := weir.Source(job, "in", kafka.Source(kafka.SourceConfig{Config: cfg, Topic: "in", Bounded: true, DeadLetter: dl}, kafka.Values(num)), weir.Parallelism(2))
	col := &weir.Collect[int]{}
	weir.Sink(src, col)
	if err := job.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := col.Records()
	slices.Sort(got)
	if !slices.Equal(got, []int{1, 2, 4, 5, 7}) {
		t.Errorf("read %v", got)
	}
	letters, err := file.ParseDeadLetters([]byte(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(letters, func(a, b file.Letter) int { return strings.Compare(a.Split, b.Split) })
	if len(letters) != 2 || letters[0].Split != "in/0" || letters[0].Offset != 2 || letters[0].Record != "x" ||
		letters[1].Split != "in/1" || letters[1].Offset != 1 || letters[1].Record != "y" || letters[0].Source != "in" {
		t.Errorf("letters %+v", letters)
	}
	if n := job.Metrics().Counters["dead_letters"]; n != 2 {
		t.Errorf("dead_letters counter %d, want 2", n)
	}

	job = weir.NewJob("nodl", weir.Workers(1))
	src = weir.Source(job, "in", kafka.Source(kafka.SourceConfig{Config: cfg, Topic: "in", Bounded: true}, kafka.Values(num)), weir.Parallelism(2))
	weir.Sink(src, &weir.Collect[int]{})
	err = job.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "topic in, partition 0, offset 2") && !strings.Contains(err.Error(), "topic in, partition 1, offset 1") {
		t.Errorf("without a dead letter: %v", err)
	}
}

// A missing topic, unreachable brokers and bad URIs are clear errors.
func TestSourceErrors(t *testing.T) {
	cfg := cluster(t)
	in := kafka.Source(kafka.SourceConfig{Config: cfg, Topic: "nope"}, kafka.Values(str))
	if err := in.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "topic nope does not exist at "+cfg.Brokers[0]) {
		t.Errorf("missing topic: %v", err)
	}
	far := kafka.Config{Brokers: []string{"127.0.0.1:1"}, Connect: 500 * time.Millisecond}
	in = kafka.Source(kafka.SourceConfig{Config: far, Topic: "t"}, kafka.Values(str))
	if err := in.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "cannot reach the brokers 127.0.0.1:1") {
		t.Errorf("unreachable: %v", err)
	}
	for uri, want := range map[string]string{
		"kafka://h:1/t/u":          "want one topic",
		"kafka://h/t":              "want host:port",
		"nats://h:1/t":             "scheme",
		"kafka://h:1/t?x=1":        "unknown parameter",
		"kafka://h:1/t?sasl=plain": "needs user:password",
	} {
		if _, _, err := kafka.ParseURI(uri); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseURI(%q): %v, want %q", uri, err, want)
		}
	}
	c, topic, err := kafka.ParseURI("kafka://u:p@a:1,b:2/events?sasl=scram-sha-256&tls=1")
	if err != nil || topic != "events" || len(c.Brokers) != 2 || c.SASL == nil || c.TLS == nil {
		t.Errorf("ParseURI: %+v %q %v", c, topic, err)
	}
}
