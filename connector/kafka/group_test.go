package kafka_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/kafka"
)

// groupOffsets returns the offsets group committed on topic, by
// partition.
func groupOffsets(t *testing.T, cfg kafka.Config, group, topic string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fetched, err := kadm.NewClient(client(t, cfg)).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	fetched.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil {
			out[o.Partition] = o.At
		}
	})
	return out
}

// With a Group, the readers commit where they stand as the group's
// offsets (with checkpoints once they complete, without at epoch ends),
// and StartCommitted resumes there.
func TestSourceCommitsGroupOffsets(t *testing.T) {
	cfg := cluster(t, "in:3")
	cl := client(t, cfg)
	batch := func(tag string, n int) []string {
		var all []string
		for p := range int32(3) {
			var vs []string
			for i := range n + int(p)*10 {
				vs = append(vs, fmt.Sprintf("%s-p%d-%d", tag, p, i))
			}
			produce(t, cl, "in", p, vs...)
			all = append(all, vs...)
		}
		slices.Sort(all)
		return all
	}
	run := func(start kafka.Start, opts ...weir.JobOption) []string {
		t.Helper()
		job := weir.NewJob("group", append([]weir.JobOption{weir.Workers(2), weir.EpochRecords(50)}, opts...)...)
		src := kafka.Source(kafka.SourceConfig{Config: cfg, Topic: "in", Bounded: true, Group: "g", Start: start}, kafka.Values(str))
		col := &weir.Collect[string]{}
		weir.Sink(weir.Source(job, "in", src, weir.Parallelism(2)), col)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := job.Run(ctx); err != nil {
			t.Fatal(err)
		}
		got := col.Records()
		slices.Sort(got)
		return got
	}
	ends := func(n int) map[int32]int64 { return map[int32]int64{0: int64(n), 1: int64(n + 10), 2: int64(n + 20)} }

	first := batch("a", 300)
	if got := run(kafka.StartCommitted, weir.Checkpoints(t.TempDir(), 2, 2)); !slices.Equal(got, first) {
		t.Fatalf("first run read %d records, want %d", len(got), len(first))
	}
	if got, want := groupOffsets(t, cfg, "g", "in"), ends(300); !maps.Equal(got, want) {
		t.Errorf("after the first run the group's offsets are %v, want the ends %v", got, want)
	}
	second := batch("b", 200)
	if got := run(kafka.StartCommitted); !slices.Equal(got, second) {
		t.Errorf("from the committed offsets, the second run read %d records, want the %d new ones", len(got), len(second))
	}
	if got, want := groupOffsets(t, cfg, "g", "in"), map[int32]int64{0: 300 + 200, 1: 310 + 210, 2: 320 + 220}; !maps.Equal(got, want) {
		t.Errorf("after the second run the group's offsets are %v, want the ends %v", got, want)
	}
	if got := run(kafka.StartEarliest); len(got) != len(first)+len(second) {
		t.Errorf("from the earliest offsets a run read %d records, want %d", len(got), len(first)+len(second))
	}
	bad := kafka.Source(kafka.SourceConfig{Config: cfg, Topic: "in", Start: kafka.StartCommitted}, kafka.Values(str))
	if _, err := bad.Open(weir.SourceContext{Instance: 0, Parallelism: 1}); err == nil || err.Error() != "kafka: source: StartCommitted without a Group" {
		t.Errorf("StartCommitted without a group: %v", err)
	}
}
