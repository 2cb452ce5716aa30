package weir_test

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/weirstream/weir"
)

// epochSink records, per call, how many records it had when each epoch
// ended.
type epochSink struct {
	mu     sync.Mutex
	n      int
	epochs []uint64
	seen   []int
}

func (s *epochSink) Write(v []rec) error { s.mu.Lock(); s.n += len(v); s.mu.Unlock(); return nil }
func (s *epochSink) Close() error        { return nil }
func (s *epochSink) EndEpoch(e uint64) error {
	s.mu.Lock()
	s.epochs = append(s.epochs, e)
	s.seen = append(s.seen, s.n)
	s.mu.Unlock()
	return nil
}

func TestEpochsReported(t *testing.T) {
	in := genRecs(71, 3000, 5, maxDelay)
	for _, c := range runCfgs() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var stats []weir.EpochStats
			opts := append([]weir.JobOption{weir.OnEpoch(func(s weir.EpochStats) {
				mu.Lock()
				stats = append(stats, s)
				mu.Unlock()
			})}, c.opts...)
			j := weir.NewJob("epochs", opts...)
			sink := &epochSink{}
			weir.Sink(weir.Filter(timedSource(c, j, "src", in), even, weir.Stateless()), sink)
			run(t, j)
			m := j.Metrics()
			if len(stats) < 2 || int64(len(stats)) != m.Epochs {
				t.Fatalf("%d epochs reported to OnEpoch, Metrics().Epochs = %d", len(stats), m.Epochs)
			}
			// Epoch numbers increase; they may skip, when a source that fell
			// behind the clock ends several epochs with one marker.
			wm := int64(math.MinInt64)
			for i, s := range stats {
				if (i > 0 && s.Epoch <= stats[i-1].Epoch) || s.Final != (i == len(stats)-1) || s.Watermark < wm {
					t.Fatalf("epoch %d of %d reported as %+v after watermark %d", i, len(stats), s, wm)
				}
				wm = s.Watermark
			}
			if last := stats[len(stats)-1]; last.Records != int64(len(in)) || m.Records != int64(len(in)) {
				t.Errorf("records: last epoch %d, Metrics %d; want %d", last.Records, m.Records, len(in))
			}
			if len(sink.epochs) != len(stats) {
				t.Errorf("EndEpoch called %d times, want %d", len(sink.epochs), len(stats))
			}
			for i, e := range sink.epochs {
				if i < len(stats) && e != stats[i].Epoch {
					t.Fatalf("EndEpoch calls %v: want the epochs reported to OnEpoch", sink.epochs)
				}
			}
			if n := sink.seen[len(sink.seen)-1]; n != len(filterSlice(in, even)) {
				t.Errorf("sink had %d records at the last epoch end, want %d", n, len(filterSlice(in, even)))
			}
		})
	}
}

// TestUnionEventTimeMix: a union of streams with and without event time is
// an error, whichever comes first.
func TestUnionEventTimeMix(t *testing.T) {
	for _, timedFirst := range []bool{true, false} {
		name := map[bool]string{true: "timed-first", false: "untimed-first"}[timedFirst]
		t.Run(name, func(t *testing.T) {
			if !timedFirst {
			}
			j := weir.NewJob("mix", weir.Workers(2))
			plain := weir.Source(j, "plain", weir.SliceSource[rec]{Records: []rec{{TS: 1}}})
			timed := weir.EventTime(weir.Source(j, "timed", weir.SliceSource[rec]{Records: []rec{{TS: 2}}}), recTS, 0)
			u := weir.Union(plain, timed)
			if timedFirst {
				u = weir.Union(timed, plain)
			}
			weir.Sink(u, &bag[rec]{})
			if err := j.Run(context.Background()); err == nil {
				t.Error("union of a stream with event time and one without ran without error")
			}
		})
	}
}

// TestMetricsWhileRunning: Metrics "returns the job's figures so far", so
// its record count must follow the sources while the job runs.
func TestMetricsWhileRunning(t *testing.T) {
	in := genRecs(72, 3000, 5, 0)
	var j *weir.Job
	var during, reported int64
	j = weir.NewJob("running", weir.Workers(1), weir.EpochRecords(100), weir.OnEpoch(func(s weir.EpochStats) {
		if s.Epoch == 5 {
			during, reported = j.Metrics().Records, s.Records
		}
	}))
	weir.Sink(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 100}), &bag[rec]{})
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if during < reported {
		t.Errorf("Metrics().Records = %d during epoch 5's report, whose stats say %d records were read", during, reported)
	}
}
