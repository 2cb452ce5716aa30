package main

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/weirstream/weir"
)

// progress draws a live status line on a terminal: events/s, epoch latency
// p50/p99 over the last epochs, and how far the watermark lags the wall
// clock. On anything but a terminal it stays silent.
type progress struct {
	w        *os.File
	tty      bool
	mu       sync.Mutex
	begin    time.Time
	lastRecs int64
	lastAt   time.Time
	recent   []time.Duration
	drawn    bool
}

func newProgress(w *os.File) *progress {
	st, err := w.Stat()
	return &progress{w: w, tty: err == nil && st.Mode()&os.ModeCharDevice != 0}
}

func (p *progress) start(t time.Time) {
	p.mu.Lock()
	p.begin, p.lastAt = t, t
	p.mu.Unlock()
}

func (p *progress) epoch(st weir.EpochStats) {
	if !p.tty || st.Final {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	p.recent = append(p.recent, st.Latency)
	if len(p.recent) > 30 {
		p.recent = p.recent[1:]
	}
	rate := float64(st.Records-p.lastRecs) / now.Sub(p.lastAt).Seconds()
	p.lastRecs, p.lastAt = st.Records, now
	l := slices.Clone(p.recent)
	slices.Sort(l)
	p50 := l[len(l)/2]
	p99 := l[min(len(l)-1, len(l)*99/100)]
	lag := "n/a"
	if st.Watermark != math.MinInt64 && st.Watermark != math.MaxInt64 {
		lag = (time.Duration(now.UnixMilli()-st.Watermark) * time.Millisecond).String()
	}
	fmt.Fprintf(p.w, "\r\033[K%5.0fs  %10.0f events/s  epoch %d  latency p50 %.2fms p99 %.2fms  watermark lag %s",
		now.Sub(p.begin).Seconds(), rate, st.Epoch, msf(p50), msf(p99), lag)
	p.drawn = true
}

func (p *progress) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
	}
	p.tty = false
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
