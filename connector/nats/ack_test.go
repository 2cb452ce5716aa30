package nats_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/nats"
)

// retained creates a stream with retention ret on name.> and returns its
// name.
func retained(t *testing.T, js jetstream.JetStream, ret jetstream.RetentionPolicy) string {
	t.Helper()
	name := streamName(t, js)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Retention: ret}); err != nil {
		t.Fatal(err)
	}
	return name
}

// ackJob reads src into a Collect (exactly-once with checkpoints),
// panicking at value crashAt.
func ackJob(t *testing.T, src weir.Input[int], crashAt int, opts ...weir.JobOption) ([]int, error) {
	t.Helper()
	j := weir.NewJob("acks", append([]weir.JobOption{weir.Workers(1), weir.EpochRecords(200)}, opts...)...)
	s := weir.Map(weir.Source(j, "numbers", src), func(v int) int {
		if v == crashAt {
			panic("crash")
		}
		return v
	}, weir.Stateless(), weir.Name("crash"))
	out := &weir.Collect[int]{}
	weir.Sink(s, out, weir.Name("out"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := j.Run(ctx)
	got := out.Records()
	slices.Sort(got)
	return got, err
}

func wantNumbers(t *testing.T, what string, got []int, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%s: %d records, want %d", what, len(got), n)
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("%s: record %d is %d: lost or doubled records", what, i, v)
		}
	}
}

// On a work-queue stream the source acknowledges what complete
// checkpoints cover, and the server deletes it: a job that crashes
// deletes nothing its restart needs (its output is exactly-once), and a
// job that finished leaves the stream empty.
func TestAcknowledgeWorkQueue(t *testing.T) {
	url, js := server(t)
	stream := retained(t, js, jetstream.WorkQueuePolicy)
	const n = 20_000
	publish(t, js, stream+".n", numbers(n))
	src := nats.Source(nats.SourceConfig{URL: url, Stream: stream, Bounded: true}, decodeInt)
	dir := t.TempDir()
	if _, err := ackJob(t, src, 12_000, weir.Checkpoints(dir, 3, 3)); err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("first run: %v, want the crash", err)
	}
	left := storedMsgs(t, js, stream)
	if left >= n || left < n-12_000 {
		t.Errorf("after a crash at record 12,000, the stream holds %d of %d messages: want the acknowledged ones gone, no more", left, n)
	}
	got, err := ackJob(t, src, -1, weir.Checkpoints(dir, 3, 3))
	if err != nil {
		t.Fatal(err)
	}
	wantNumbers(t, "restored run", got, n)
	if left := storedMsgs(t, js, stream); left != 0 {
		t.Errorf("after the job finished the stream holds %d messages, want 0", left)
	}

	// Without checkpoints every epoch's end is acknowledged.
	stream2 := retained(t, js, jetstream.WorkQueuePolicy)
	publish(t, js, stream2+".n", numbers(n))
	src2 := nats.Source(nats.SourceConfig{URL: url, Stream: stream2, Bounded: true}, decodeInt)
	if _, err := ackJob(t, src2, 15_000); err == nil {
		t.Fatal("no crash")
	}
	if left := storedMsgs(t, js, stream2); left >= n-10_000 || left < n-15_000 {
		t.Errorf("without checkpoints, after a crash at record 15,000, the stream holds %d of %d messages: want what epochs before it passed on gone", left, n)
	}
	got, err = ackJob(t, src2, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[0] < 10_000 || got[len(got)-1] != n-1 {
		t.Errorf("the second run read %d records from %v: want it to start where the acknowledgements stopped", len(got), got[:min(1, len(got))])
	}
	if left := storedMsgs(t, js, stream2); left != 0 {
		t.Errorf("after the second run the stream holds %d messages, want 0", left)
	}
}

// On an interest stream, whose messages stay while a consumer has not
// acknowledged them, the source replaces the consumer an earlier run left
// without losing a message, and acknowledges them all by the end.
func TestAcknowledgeInterest(t *testing.T) {
	url, js := server(t)
	stream := retained(t, js, jetstream.InterestPolicy)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	// The consumer of an earlier run holds the messages.
	if _, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "weir-acks-numbers-" + nuid.Next(), AckPolicy: jetstream.AckAllPolicy}); err != nil {
		t.Fatal(err)
	}
	const n = 5000
	publish(t, js, stream+".n", numbers(n))
	if got := storedMsgs(t, js, stream); got != n {
		t.Fatalf("the stream holds %d messages, want %d", got, n)
	}
	src := nats.Source(nats.SourceConfig{URL: url, Stream: stream, Bounded: true}, decodeInt)
	got, err := ackJob(t, src, -1, weir.Checkpoints(t.TempDir(), 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	wantNumbers(t, "interest stream", got, n)
	if left := storedMsgs(t, js, stream); left != 0 {
		t.Errorf("after the job the stream holds %d messages, want 0", left)
	}
	if cons := consumers(t, js, stream); len(cons) != 1 || !strings.HasPrefix(cons[0].Name, "weir-acks-numbers-") {
		t.Errorf("consumers left: %v, want only the source's last", cons)
	}
}

// On a stream with limits retention the messages stay, and the durable
// consumer's acknowledgement floor says how far the job got; an ordered
// consumer reads it exactly-once through a crash, and cannot read a
// stream that needs acknowledgements.
func TestAcknowledgeLimitsAndOrdered(t *testing.T) {
	url, js := server(t)
	stream := retained(t, js, jetstream.LimitsPolicy)
	const n = 3000
	publish(t, js, stream+".n", numbers(n))
	src := nats.Source(nats.SourceConfig{URL: url, Stream: stream, Bounded: true, Consumer: "counter"}, decodeInt)
	got, err := ackJob(t, src, -1, weir.Checkpoints(t.TempDir(), 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	wantNumbers(t, "limits stream", got, n)
	cons := consumers(t, js, stream)
	if len(cons) != 1 || !strings.HasPrefix(cons[0].Name, "counter-") || cons[0].AckFloor.Stream != n {
		t.Errorf("consumers %v, want one counter-TOKEN acknowledged up to %d", cons, n)
	}
	if left := storedMsgs(t, js, stream); left != n {
		t.Errorf("the stream holds %d messages, want %d", left, n)
	}

	// Ordered: a crashed job restored from its checkpoint reads each
	// message once.
	ord := nats.Source(nats.SourceConfig{URL: url, Stream: stream, Bounded: true, Ordered: true}, decodeInt)
	dir := t.TempDir()
	if _, err := ackJob(t, ord, 2000, weir.Checkpoints(dir, 2, 3)); err == nil {
		t.Fatal("no crash")
	}
	got, err = ackJob(t, ord, -1, weir.Checkpoints(dir, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	wantNumbers(t, "ordered, restored", got, n)

	wq := retained(t, js, jetstream.WorkQueuePolicy)
	ordered := nats.Source(nats.SourceConfig{URL: url, Stream: wq, Ordered: true}, decodeInt)
	if _, err := ordered.Open(weir.SourceContext{Instance: 0, Parallelism: 1}); err == nil || !strings.Contains(err.Error(), "an ordered consumer cannot read it") {
		t.Errorf("an ordered consumer on a work queue: %v", err)
	}
	fromNew := nats.Source(nats.SourceConfig{URL: url, Stream: wq, New: true}, decodeInt)
	if _, err := fromNew.Open(weir.SourceContext{Instance: 0, Parallelism: 1}); err == nil || !strings.Contains(err.Error(), "is a work queue") {
		t.Errorf("a work queue from new messages: %v", err)
	}
}

// consumers returns the stream's consumers.
func consumers(t *testing.T, js jetstream.JetStream, stream string) []*jetstream.ConsumerInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []*jetstream.ConsumerInfo
	l := streamOf(t, js, stream).ListConsumers(ctx)
	for info := range l.Info() {
		out = append(out, info)
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Two sources of one job on one stream read through consumers of their
// own (weir-JOB-SOURCE-TOKEN) and each reads every message. A reader
// whose consumer a later reader of its source deleted fails, naming it,
// instead of reading on with nothing (or another's messages).
func TestAcknowledgeOwnConsumers(t *testing.T) {
	url, js := server(t)
	stream := retained(t, js, jetstream.LimitsPolicy)
	const n = 4000
	publish(t, js, stream+".n", numbers(n))
	j := weir.NewJob("two", weir.Workers(1), weir.EpochRecords(200))
	var outs []*weir.Collect[int]
	for _, name := range []string{"a", "b"} {
		src := nats.Source(nats.SourceConfig{URL: url, Stream: stream, Bounded: true}, decodeInt)
		out := &weir.Collect[int]{}
		weir.Sink(weir.Source(j, name, src), out, weir.Name(name+"-out"))
		outs = append(outs, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := j.Run(ctx); err != nil {
		t.Fatal(err)
	}
	for i, out := range outs {
		got := out.Records()
		slices.Sort(got)
		wantNumbers(t, fmt.Sprint("source ", i), got, n)
	}
	var names []string
	for _, c := range consumers(t, js, stream) {
		names = append(names, c.Name[:max(0, len(c.Name)-23)])
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"weir-two-a", "weir-two-b"}) {
		t.Errorf("consumers %v, want weir-two-a-TOKEN and weir-two-b-TOKEN", names)
	}

	src := nats.Source(nats.SourceConfig{URL: url, Stream: stream, Consumer: "shared"}, decodeInt)
	first, err := src.Open(weir.SourceContext{Instance: 0, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	read := 0
	for read < n {
		b, err := first.Read()
		if err != nil {
			t.Fatal(err)
		}
		read += len(b)
	}
	second, err := src.Open(weir.SourceContext{Instance: 0, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if _, err := second.Read(); err != nil {
		t.Fatal(err)
	}
	end := time.Now().Add(15 * time.Second)
	for time.Now().Before(end) {
		if _, err = first.Read(); err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "was deleted, by another reader of its source") {
		t.Errorf("a reader whose consumer a later one replaced: %v", err)
	}
}
