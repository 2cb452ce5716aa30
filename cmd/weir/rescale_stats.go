package main

import (
	"context"
	"runtime/metrics"
	"slices"
	"sync"
	"time"

	"github.com/weirstream/weir"
)

// epochLog records every completed epoch of a benchmark's jobs: its
// number, when it completed (wall clock), its latency and which job of
// the run (generation, from 0) completed it.
type epochLog struct {
	mu     sync.Mutex
	gen    int
	epochs []loggedEpoch
	extra  []time.Duration // latencies of the migration phase not carried by an epoch
}

type loggedEpoch struct {
	epoch   uint64
	at      time.Time
	latency time.Duration
	gen     int
}

// option is the OnEpoch of the run's jobs.
func (l *epochLog) option() weir.JobOption {
	return weir.OnEpoch(func(s weir.EpochStats) {
		now := time.Now()
		l.mu.Lock()
		l.epochs = append(l.epochs, loggedEpoch{epoch: s.Epoch, at: now, latency: s.Latency, gen: l.gen})
		l.mu.Unlock()
	})
}

// next makes the epochs logged from now on the next job's.
func (l *epochLog) next() {
	l.mu.Lock()
	l.gen++
	l.mu.Unlock()
}

// firstOf returns when the first epoch of job generation g completed (and
// false if none did).
func (l *epochLog) firstOf(g int) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.epochs {
		if e.gen == g {
			return e.at, true
		}
	}
	return time.Time{}, false
}

// addDuring adds a latency to the migration phase that no epoch's
// latency shows (a restart's downtime).
func (l *epochLog) addDuring(d time.Duration) {
	l.mu.Lock()
	l.extra = append(l.extra, d)
	l.mu.Unlock()
}

// split returns the latencies of the epochs completed before start, from
// start to end (both included, with the extra latencies), and after end.
func (l *epochLog) split(start, end time.Time) (before, during, after []time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	during = append(during, l.extra...)
	for _, e := range l.epochs {
		switch {
		case e.at.Before(start):
			before = append(before, e.latency)
		case e.at.After(end):
			after = append(after, e.latency)
		default:
			during = append(during, e.latency)
		}
	}
	return before, during, after
}

// latencies are the latencies of the epochs completed in [from, to).
func (l *epochLog) latencies(from, to time.Time) []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []time.Duration
	for _, e := range l.epochs {
		if !e.at.Before(from) && e.at.Before(to) {
			out = append(out, e.latency)
		}
	}
	return out
}

// when is the time epoch e completed, or the newest one before it that
// was logged (zero if none was).
func (l *epochLog) when(e uint64) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var at time.Time
	var best uint64
	for _, x := range l.epochs {
		if x.epoch <= e && x.epoch >= best {
			at, best = x.at, x.epoch
		}
	}
	return at
}

// latencySummary is the p50, p99 and max of latencies, in ms, and their
// number: an empty phase has n 0 and zeros.
func latencySummary(ds []time.Duration) map[string]any {
	out := map[string]any{"n": len(ds), "p50": 0.0, "p99": 0.0, "max": 0.0}
	if len(ds) == 0 {
		return out
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	out["p50"] = ms(s[(len(s)-1)*50/100])
	out["p99"] = ms(s[(len(s)-1)*99/100])
	out["max"] = ms(s[len(s)-1])
	return out
}

// heapSample is the bytes of the live heap at a time.
type heapSample struct {
	at    time.Time
	bytes uint64
}

// heapObjectsMetric is what the sampler reads: the heap's live objects as
// the last garbage collection marked them (runtime/metrics), so garbage
// not yet collected does not count.
const heapObjectsMetric = "/gc/heap/live:bytes"

// sampleHeap reads heapObjectsMetric every period until ctx ends, and
// returns the samples once it has (on done).
func sampleHeap(ctx context.Context, period time.Duration) <-chan []heapSample {
	done := make(chan []heapSample, 1)
	go func() {
		s := []metrics.Sample{{Name: heapObjectsMetric}}
		var out []heapSample
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			metrics.Read(s)
			out = append(out, heapSample{time.Now(), s[0].Value.Uint64()})
			select {
			case <-ctx.Done():
				done <- out
				return
			case <-t.C:
			}
		}
	}()
	return done
}

// maxHeap is the largest sample in [from, to) (zero times: unbounded).
func maxHeap(samples []heapSample, from, to time.Time) uint64 {
	var m uint64
	for _, s := range samples {
		if (!from.IsZero() && s.at.Before(from)) || (!to.IsZero() && !s.at.Before(to)) {
			continue
		}
		m = max(m, s.bytes)
	}
	return m
}
