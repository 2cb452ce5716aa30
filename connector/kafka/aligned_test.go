package kafka_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/kafka"
)

// Each of four partitions holds times 0 to 40 s, two of them ten times
// as densely; one reader reads them all. With EventTime the reader hands
// them out in step, so a watermark 100 ms behind the records' times makes
// none late and every window counts all four partitions' records; without
// it, the sparse partitions' times run ahead and the dense ones' records
// are late.
func TestEventTimeAlignsPartitions(t *testing.T) {
	cfg := cluster(t, "in:4")
	cl := client(t, cfg)
	// Even partitions hold a record every 10 ms, odd ones one every ms,
	// each padded to some 200 bytes: fetches, which take a partition's
	// bytes in step, take the even partitions' times far ahead.
	pad := strings.Repeat("x", 200)
	for p := range int32(4) {
		step := 10 - 9*int(p%2)
		var vs []string
		for ms := 0; ms < 40_000; ms += step {
			vs = append(vs, fmt.Sprintf("%d %s", ms, pad))
		}
		produce(t, cl, "in", p, vs...)
	}
	ms := func(b []byte) (int64, error) {
		n, _, _ := strings.Cut(string(b), " ")
		return strconv.ParseInt(n, 10, 64)
	}
	run := func(align bool) (map[int64]int64, int64) {
		in := kafka.Source(kafka.SourceConfig{Config: cfg, Topic: "in", Bounded: true}, kafka.Values(ms))
		if align {
			in = in.EventTime(func(v int64) int64 { return v }, 0)
		}
		job := weir.NewJob("aligned", weir.Workers(1), weir.EpochRecords(1000))
		src := weir.Source(job, "in", in, weir.Parallelism(1))
		timed := weir.EventTime(src, func(v int64) int64 { return v }, 100*time.Millisecond)
		keyed := weir.KeyBy(timed, func(int64) string { return "k" })
		col := &weir.Collect[weir.WindowResult[string, int64]]{}
		weir.Sink(weir.Count(weir.Window(keyed, weir.Tumbling(time.Second))), col)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := job.Run(ctx); err != nil {
			t.Fatal(err)
		}
		got := map[int64]int64{}
		for _, r := range col.Records() {
			got[r.Start] += r.Value
		}
		return got, job.Metrics().Late
	}
	got, late := run(true)
	var bad []string
	for w := int64(0); w < 40_000; w += 1000 {
		if got[w] != 2*100+2*1000 {
			bad = append(bad, fmt.Sprintf("window %d: %d", w, got[w]))
		}
	}
	if late != 0 || len(bad) > 0 {
		t.Errorf("aligned: %d late, windows off: %s", late, strings.Join(bad, "; "))
	}
	if _, late := run(false); late == 0 {
		t.Errorf("without EventTime no record was late: the test shows nothing")
	}
}
