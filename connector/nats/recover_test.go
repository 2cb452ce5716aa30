package nats_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/nats"
)

type click struct {
	User string
	TS   int64
}

// clicks returns n payloads "user,ts" over 23 users, ten per millisecond.
func clicks(n int) []string {
	p := make([]string, n)
	for i := range p {
		p[i] = fmt.Sprintf("u%d,%d", i%23, i/10)
	}
	return p
}

func decodeClick(data []byte) (click, error) {
	user, ts, ok := strings.Cut(string(data), ",")
	n, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil {
		return click{}, fmt.Errorf("not user,ts: %q", data)
	}
	return click{user, n}, nil
}

// crashing returns the clicks of src, read by k source instances,
// panicking at the click of time crashAt.
func crashing(j *weir.Job, src weir.Input[click], k int, crashAt int64) weir.Stream[click] {
	s := weir.Source(j, "clicks", src, weir.Parallelism(k))
	return weir.Map(s, func(c click) click {
		if c.TS == crashAt {
			panic("crash")
		}
		return c
	}, weir.Stateless(), weir.Name("crash"))
}

// A job with checkpoints that crashes midway and is restarted from its
// checkpoint counts every click once per user: the source resumed at the
// sequence its checkpoint held, with as many source instances or fewer
// (SeekSplits).
func TestCheckpointRestart(t *testing.T) {
	url, js := server(t)
	stream := newStream(t, js)
	const n = 20000
	payloads := clicks(n)
	publish(t, js, stream+".clicks", payloads)
	want := map[string]int64{}
	for _, p := range payloads {
		c, _ := decodeClick([]byte(p))
		want[c.User]++
	}
	src := nats.Source(nats.SourceConfig{URL: url, Stream: stream, Bounded: true}, decodeClick)
	for _, k := range [][2]int{{1, 1}, {3, 2}} {
		t.Run(fmt.Sprintf("instances=%d,%d", k[0], k[1]), func(t *testing.T) {
			ckpt := t.TempDir()
			run := func(k int, crashAt int64, opts ...weir.JobOption) (map[string]int64, *weir.Job, error) {
				j := weir.NewJob("counts", append([]weir.JobOption{weir.Workers(2), weir.EpochRecords(200), weir.Checkpoints(ckpt, 3, 3)}, opts...)...)
				counts := weir.Count(weir.Window(weir.KeyBy(crashing(j, src, k, crashAt), func(c click) string { return c.User }), weir.Global()))
				col := &weir.Collect[weir.WindowResult[string, int64]]{}
				weir.Sink(counts, col, weir.Name("out"))
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				err := j.Run(ctx)
				got := map[string]int64{}
				for _, r := range col.Records() {
					got[r.Key] += r.Value
				}
				return got, j, err
			}
			if _, _, err := run(k[0], 1400); err == nil || !strings.Contains(err.Error(), "crash") {
				t.Fatalf("first run: %v; want it to crash", firstLine(err))
			}
			got, j, err := run(k[1], -1, weir.FromCheckpoint(latestCheckpoint(t, ckpt)))
			if err != nil {
				t.Fatal(err)
			}
			if j.Metrics().RestoredFrom == 0 {
				t.Error("the second run did not restore a checkpoint")
			}
			if !maps.Equal(got, want) {
				t.Errorf("counts after the restart:\n%v\nwant\n%v", got, want)
			}
		})
	}
}

// windowLine is a result of the windowed count as the sink publishes
// it.
func windowLine(r weir.WindowResult[string, int64], dst []byte) []byte {
	return fmt.Appendf(dst, "%s,%d,%d", r.Key, r.Start, r.Value)
}

// NATS to a job to NATS: a windowed count per user, whose results the
// sink (two instances sharing it) publishes as windows fire, crashes midway and is restarted from
// its checkpoint. The results published after the checkpoint are
// published again, and the output stream holds each result once.
func TestSinkExactlyOnce(t *testing.T) {
	url, js := server(t)
	in := newStream(t, js)
	out := streamName(t, js)
	const n = 20000
	payloads := clicks(n)
	publish(t, js, in+".clicks", payloads)
	want := map[string]int64{}
	for _, p := range payloads {
		c, _ := decodeClick([]byte(p))
		want[fmt.Sprintf("%s,%d", c.User, c.TS/50*50)]++
	}
	var wantLines []string
	for k, v := range want {
		wantLines = append(wantLines, fmt.Sprintf("%s,%d", k, v))
	}
	slices.Sort(wantLines)

	src := nats.Source(nats.SourceConfig{URL: url, Stream: in, Bounded: true}, decodeClick)
	snk := nats.Sink(nats.SinkConfig{URL: url, Stream: out, Create: true}, windowLine)
	ckpt := t.TempDir()
	var sent atomic.Int64
	run := func(crashAt int64, opts ...weir.JobOption) (*weir.Job, error) {
		j := weir.NewJob("windows", append([]weir.JobOption{weir.Workers(2), weir.EpochRecords(200), weir.Checkpoints(ckpt, 5, 3)}, opts...)...)
		timed := weir.EventTime(crashing(j, src, 1, crashAt), func(c click) int64 { return c.TS }, 10*time.Millisecond, weir.Name("time"))
		counts := weir.Count(weir.Window(weir.KeyBy(timed, func(c click) string { return c.User }), weir.Tumbling(50*time.Millisecond)))
		counts = weir.Map(counts, func(r weir.WindowResult[string, int64]) weir.WindowResult[string, int64] {
			sent.Add(1)
			return r
		}, weir.Stateless(), weir.Name("tally"))
		weir.Sink(counts, snk, weir.Name("nats"), weir.Parallelism(2))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return j, j.Run(ctx)
	}
	if _, err := run(1495); err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("first run: %v; want it to crash", firstLine(err))
	}
	before := storedMsgs(t, js, out)
	if before == 0 {
		t.Fatal("the first run published nothing before it crashed; the test needs some")
	}
	sent.Store(0)
	j, err := run(-1, weir.FromCheckpoint(latestCheckpoint(t, ckpt)))
	if err != nil {
		t.Fatal(err)
	}
	if j.Metrics().RestoredFrom == 0 {
		t.Error("the second run did not restore a checkpoint")
	}
	if total := before + uint64(sent.Load()); total <= uint64(len(wantLines)) {
		t.Errorf("the runs published %d and %d results, for %d: the restart published nothing again", before, sent.Load(), len(wantLines))
	} else {
		t.Logf("published %d, then %d after the restart: %d again, dropped as duplicates", before, sent.Load(), total-uint64(len(wantLines)))
	}
	lines := readAll(t, nats.Source(nats.SourceConfig{URL: url, Stream: out, Bounded: true}, func(b []byte) (string, error) { return string(b), nil }), 1)
	slices.Sort(lines)
	if !slices.Equal(lines, wantLines) {
		t.Errorf("the output stream holds %d results (%d distinct); want %d, once each",
			len(lines), len(slices.Compact(slices.Clone(lines))), len(wantLines))
	}
}
