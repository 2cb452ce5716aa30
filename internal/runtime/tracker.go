package runtime

import (
	"slices"
	"sync"
	"time"

	"github.com/weirstream/weir/internal/progress"
)

// tracker finds when an epoch has ended at every terminal task.
type tracker struct {
	mu       sync.Mutex
	next     []progress.Epoch // per terminal: the next epoch it will complete
	final    []bool
	cut      map[progress.Epoch]int64
	wm       map[progress.Epoch]progress.Watermark // the lowest of the terminals that are not idle
	idleWm   map[progress.Epoch]progress.Watermark // the highest of the idle terminals
	done     progress.Epoch                        // epochs below this have been reported
	lastWm   progress.Watermark                    // the watermark last reported, when reported is set
	reported bool
	onEpoch  func(EpochStats)
}

func (t *tracker) add() int {
	t.next = append(t.next, 0)
	t.final = append(t.final, false)
	return len(t.next) - 1
}

// leave leaves terminal i out until it joins: an instance that takes no
// part holds back no epoch.
func (t *tracker) leave(i int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.final[i] = true
}

// join takes terminal i back from epoch e on.
func (t *tracker) join(i int, e progress.Epoch) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next[i], t.final[i] = e, false
}

func (t *tracker) complete(i int, m progress.Marker) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cut == nil {
		t.cut = map[progress.Epoch]int64{}
		t.wm = map[progress.Epoch]progress.Watermark{}
		t.idleWm = map[progress.Epoch]progress.Watermark{}
	}
	t.next[i] = m.Epoch + 1
	t.final[i] = m.Final
	if m.Epoch >= t.done { // (one reported already: a terminal that joined late catches up)
		t.note(m)
	}
	// The lowest epoch not yet completed everywhere.
	low := progress.Epoch(1<<63 - 1)
	allFinal := true
	for j, n := range t.next {
		if !t.final[j] {
			allFinal = false
			low = min(low, n)
		}
	}
	now := time.Now().UnixNano()
	if allFinal {
		low = maxNext(t.next)
	}
	// Epochs can be skipped (a marker may end several, and epochs counted
	// from the Unix epoch start far from 0); report those that some
	// terminal ended, in order.
	if t.done >= low {
		return
	}
	var ended []progress.Epoch
	for e := range t.cut {
		if e < low {
			ended = append(ended, e)
		}
	}
	slices.Sort(ended)
	t.done = low
	for k, e := range ended {
		wm, ok := t.wm[e]
		if !ok {
			wm = t.idleWm[e]
		}
		if t.reported && wm < t.lastWm {
			wm = t.lastWm // after all terminals were idle, as an aligner does
		}
		t.lastWm, t.reported = wm, true
		st := EpochStats{Epoch: e, Watermark: wm, Latency: time.Duration(now - t.cut[e]), Final: allFinal && k == len(ended)-1}
		delete(t.cut, e)
		delete(t.wm, e)
		delete(t.idleWm, e)
		if t.onEpoch != nil {
			t.onEpoch(st)
		}
	}
}

// note keeps marker m's cut time and watermark for its epoch's report.
func (t *tracker) note(m progress.Marker) {
	if c, ok := t.cut[m.Epoch]; !ok || (m.Cut != 0 && m.Cut < c) {
		t.cut[m.Epoch] = m.Cut
	}
	if m.Idle {
		// Left out of the minimum, as receivers leave idle senders out.
		if w, ok := t.idleWm[m.Epoch]; !ok || m.Watermark > w {
			t.idleWm[m.Epoch] = m.Watermark
		}
	} else if w, ok := t.wm[m.Epoch]; !ok || m.Watermark < w {
		t.wm[m.Epoch] = m.Watermark
	}
}

func maxNext(next []progress.Epoch) progress.Epoch {
	var m progress.Epoch
	for _, n := range next {
		m = max(m, n)
	}
	return m
}
